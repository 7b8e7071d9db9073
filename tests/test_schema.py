"""The typed shapes of the kit's files (grader/schema.py): one-line errors and the published JSON Schemas."""
import copy
import json
import tomllib

import pytest

from grader import schema
from grader.catalog import FEATURES, KINDS, load_catalog
from tests.conftest import ROOT

INFO = ROOT / "exercises" / "info.toml"
RAW = tomllib.loads(INFO.read_text(encoding="utf-8"))


def test_the_published_schemas_are_current():
    """docs/schemas/ is what `python -m grader.schema docs/schemas` (info, verdict, policy) and
    `python -m grader.instructor.gradebook docs/schemas` (the gradebook) write from the types: run them after a change."""
    from grader.instructor import gradebook

    for module, types in (("grader.schema", schema.SCHEMAS), ("grader.instructor.gradebook", gradebook.SCHEMAS)):
        for name, doc in schema.schemas(types).items():
            published = json.loads((ROOT / "docs" / "schemas" / name).read_text(encoding="utf-8"))
            assert published == doc, f"docs/schemas/{name} is stale: python -m {module} docs/schemas"


def test_the_catalogs_names_are_the_schemas():
    assert set(FEATURES) == set(schema.Feature.__args__) and KINDS == schema.Kind.__args__


@pytest.mark.parametrize("pack", [ROOT / "exercises", ROOT / "examples" / "alibi-pack" / "exercises"])
def test_the_packs_info_files_have_the_schemas_shape(pack):
    raw = tomllib.loads((pack / "info.toml").read_text(encoding="utf-8"))
    assert len(schema.read_info(raw, pack / "info.toml").exercise) == len(raw["exercise"])


def change(path: list, value):
    data = copy.deepcopy(RAW)
    target = data
    for step in path[:-1]:
        target = target[step]
    if value is KeyError:
        del target[path[-1]]
    else:
        target[path[-1]] = value
    return data


@pytest.mark.parametrize("path, value, says", [
    (["exercise", 2, "features", 0], "casual",
     "exercise 3 (causal_attention): features[0]: 'casual' is not one of unbatched, causal, dropout, divisible_check"),
    (["exercise", 2, "kinds"], "module", "exercise 3 (causal_attention): kinds: unknown key (known: number, slug,"),
    (["exercise", 2, "dims", "outptu"], "d_out",
     "exercise 3 (causal_attention): dims.outptu: unknown key (known: input, output, heads, kv_heads,"),
    (["exercise", 2, "number"], "3", "exercise #3 (causal_attention): number: must be int, not str"),
    (["exercise", 2, "entry"], KeyError, "exercise 3 (causal_attention): entry: missing"),
    (["exercise", 2, "limits"], {"memory_mb": "x"}, "exercise 3 (causal_attention): limits.memory_mb: must be int, not str"),
    (["exercise", 2, "sweep", 0], {"d_in": [1]},
     "exercise 3 (causal_attention): sweep[0]: each value must be bool | int | float | str, not array"),
    (["extras"], 1, "extras: unknown key (known: format_version, allowed_imports, points, exercise, policy)"),
    (["policy"], {"denied_name": ["eval"]}, "policy.denied_name: unknown key (known: allowed_imports,"),
    (["policy"], {"static_check": "no"}, "policy.static_check: must be bool, not str"),
])
def test_a_type_error_is_one_line_naming_file_exercise_and_key(path, value, says):
    with pytest.raises(schema.SchemaError) as err:
        schema.read_info(change(path, value), INFO)
    text = str(err.value)
    assert text.startswith(f"{INFO}: {says}") and "\n" not in text and "$." not in text, text


def test_the_catalog_reports_schema_errors_as_its_own(tmp_path):
    import shutil

    from grader.catalog import CatalogError, read_catalog
    from grader.pack import Pack

    for name in ("exercises", "solutions"):
        shutil.copytree(ROOT / name, tmp_path / name)
    shutil.copytree(ROOT / "grader" / "checks", tmp_path / "checks")
    info = tmp_path / "exercises" / "info.toml"
    info.write_text(info.read_text(encoding="utf-8").replace("number = 4\n", 'number = "4"\n', 1), encoding="utf-8")
    with pytest.raises(CatalogError, match=r"exercise #4 \(multihead_attention\): number: must be int, not str"):
        read_catalog(Pack.at(tmp_path))
    assert load_catalog().get(4).number == 4
