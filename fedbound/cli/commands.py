"""The commands of ``fedbound``: the module that registers each (only the module of the requested
command is imported: torch, cvxpy and sympy are slow to import) and its one-line summary, which
``fedbound --help`` prints without importing any command module."""

#: the exit status of ``fedbound verify`` when a check is violated (a counterexample): neither
#: success (0), an internal error (1) nor bad input (2)
EXIT_VIOLATED = 3

#: command -> the module that registers it, in the order of ``fedbound --help``
COMMANDS = {
    "demo": "fedbound.cli.demo_cmd",
    "network": "fedbound.cli.network_cmd",
    "list": "fedbound.cli.theory_cmd",
    "bound": "fedbound.cli.theory_cmd",
    "stepsize": "fedbound.cli.theory_cmd",
    "constants": "fedbound.cli.theory_cmd",
    "rounds": "fedbound.cli.theory_cmd",
    "audit": "fedbound.cli.audit_cmd",
    "run": "fedbound.cli.run_cmd",
    "fixed-point": "fedbound.cli.fixed_point_cmd",
    "verify": "fedbound.cli.verify_cmd",
    "control": "fedbound.cli.control_cmd",
    "sweep": "fedbound.cli.sweep_cmd",
    "pep": "fedbound.cli.pep_cmd",
    "new": "fedbound.cli.new_cmd",
}

#: command -> its one-line summary (the ``help`` of its parser, which reads it from here)
SUMMARIES = {
    "demo": "a tour of the toolkit: each paper's bound, audit and runs vs prediction; controller, PEP, sweep; one HTML page",
    "network": "topologies, gossip matrices, mixing measures",
    "list": "list every result (or algorithm, paper, check, task, PEP method, ...) of the registries",
    "bound": "evaluate a result's bound, step-size conditions, terms and extras",
    "stepsize": "largest admissible step size (gamma, eta_l, ...) and the binding condition",
    "constants": "each constant of a result: meaning, domain, source",
    "rounds": "rounds to eps: SD-GT Table I, or one result's bound",
    "audit": "audit a paper's claims (holds / fails with counterexamples)",
    "run": "run an algorithm (SD-GT, its baselines, the FedOpt family) and save metrics, a plot and the final model",
    "fixed-point": "exact finite-lr fixed point and contraction factor of any algorithm on a quadratic",
    "verify": "check a paper's theory against runs: measured vs predicted",
    "control": "SD-GT co-optimization controller (D2D rounds K, subnet sampling h_s)",
    "sweep": "run a grid of runs (embedded or on Ray) into a resumable results store; `sweep report DIR` for its table and plots",
    "pep": "worst-case certificate of a federated/decentralized method (performance estimation)",
    "new": "write a new plugin package from the template",
}
