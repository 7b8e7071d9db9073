"""`python -m grader.sandbox`: check from the outside what a worker's isolation holds on this machine."""
from grader.sandbox.selfcheck import main

main()
