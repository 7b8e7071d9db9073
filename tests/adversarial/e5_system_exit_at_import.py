# attack: raise SystemExit(0) while being imported -> fail (SystemExit)
raise SystemExit(0)
