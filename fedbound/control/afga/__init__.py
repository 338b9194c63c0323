"""AFGA control (seed 000, papers/afga.md 5): the communication-time model of Table 7 and a chooser
of local steps I, gossip topology and cluster count minimizing the bound's predicted wall-clock time."""
from fedbound.control.afga.chooser import TOPOLOGIES, CandidateResult, Choice, choose
from fedbound.control.afga.comm_time import (GOSSIPS, TABLE1_ROUNDS_78, TABLE7_ACCURACY, TABLE7_HOURS,
                                             CommTimeModel, implied_rounds, table7_hours)

__all__ = ["CommTimeModel", "table7_hours", "implied_rounds", "TABLE1_ROUNDS_78", "TABLE7_HOURS",
           "TABLE7_ACCURACY", "GOSSIPS", "choose", "Choice", "CandidateResult", "TOPOLOGIES"]
