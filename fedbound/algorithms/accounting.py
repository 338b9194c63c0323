"""Communication accounting: messages, floats and energy per round of an algorithm.

Counting rules (one place, used by every algorithm):

* D2D. One *exchange* is a synchronous D2D round in which every client sends one d-vector to each
  of its neighbours, so it costs one *message* per directed link (i, j), i != j, with w_ij > 0.
  SD-GT uses K model exchanges (eq. (5)) plus one tracking exchange of sum_k z~_i^{t,k}
  (eq. (7), seed 003 [L152]) per global round.
* Device-server (DS). An *upload* is one client -> server transmission, a *download* one
  server -> client transmission; their payloads are counted in floats (SD-GT: d floats up per
  sampled client, 2d floats down: x_g^{t+1} and psi_s^{t+1}).
* Energy follows the cost model of SD-GT's controller objective (27)/(31) (seed 003 [L404-L408],
  sdgt.md 5.1): per global round  sum_s (1 - beta_s) E_s + K sum_s E_s^{D2D}, where
  1 - beta_s = h_s / m_s is the sampled fraction of subnet s, E_s the cost of a device-server round
  trip of the whole subnet s and E_s^{D2D} the cost of one D2D round in subnet s.
  Decision (the paper is silent): the tracking exchange is NOT charged as a D2D round by default,
  so that measured energy equals the controller's modelled energy; set
  ``EnergyModel(charge_tracking_exchanges=True)`` to charge it like a model exchange. Messages and
  floats always include it.
* Work. ``gradient_evaluations`` counts the local (stochastic) gradients computed in the round (a
  client past its tau_i local steps, or outside AFGA's compute set, computes none);
  ``client_state_floats`` the floats of client optimizer state held during the round, summed over
  the clients that run local steps (Transform.state_floats(d) each; FedAda2's memory comparison).
"""
from __future__ import annotations

from dataclasses import dataclass, fields

import numpy as np

from fedbound.argtypes import Count, NonNegative, NonNegativeArray, NonNegativeInt, PositiveArray
from fedbound.errors import require


@dataclass(frozen=True)
class EnergyModel:
    """Per-subnet energy costs: ``E_ds[s]`` per device-server round trip of the whole subnet s,
    ``E_d2d[s]`` per D2D round in subnet s (sdgt.md 5.1)."""

    E_ds: NonNegativeArray
    E_d2d: NonNegativeArray
    charge_tracking_exchanges: bool = False

    def __post_init__(self):
        E_ds = np.asarray(self.E_ds, dtype=np.float64).reshape(-1)
        E_d2d = np.asarray(self.E_d2d, dtype=np.float64).reshape(-1)
        require(E_ds.shape == E_d2d.shape,
                f"E_ds and E_d2d must have one entry per subnet, got {E_ds.size} and {E_d2d.size}")
        require(bool(np.all(np.isfinite(E_ds)) and np.all(E_ds >= 0)),
                f"E_ds must be finite and >= 0, got {E_ds.tolist()}")
        require(bool(np.all(np.isfinite(E_d2d)) and np.all(E_d2d >= 0)),
                f"E_d2d must be finite and >= 0, got {E_d2d.tolist()}")
        object.__setattr__(self, "E_ds", E_ds)
        object.__setattr__(self, "E_d2d", E_d2d)

    @classmethod
    def unit(cls, S: Count) -> "EnergyModel":
        """E_s = E_s^{D2D} = 1 for every subnet: energy in units of one subnet's round trip."""
        return cls(np.ones(S), np.ones(S))


@dataclass(frozen=True)
class RoundTraffic:
    """What one round of an algorithm transmits, per protocol (before multiplying by the graph).

    uploaders[s]: clients of subnet s that upload this round; receivers[s]: clients of subnet s
    that receive a download; ``*_floats_each``: payload of one upload / download.
    """

    model_exchanges: NonNegativeInt
    tracking_exchanges: NonNegativeInt
    uploaders: NonNegativeArray
    upload_floats_each: NonNegativeInt
    receivers: NonNegativeArray
    download_floats_each: NonNegativeInt
    gradients: NonNegativeInt = 0
    client_state_floats: NonNegativeInt = 0


@dataclass(frozen=True)
class CommCounts:
    """Communication counters (per round or cumulative); ``a + b`` adds them field by field."""

    d2d_exchanges: NonNegativeInt = 0
    d2d_messages: NonNegativeInt = 0
    d2d_floats: NonNegativeInt = 0
    uploads: NonNegativeInt = 0
    upload_floats: NonNegativeInt = 0
    downloads: NonNegativeInt = 0
    download_floats: NonNegativeInt = 0
    energy_ds: NonNegative = 0.0
    energy_d2d: NonNegative = 0.0
    gradient_evaluations: NonNegativeInt = 0
    client_state_floats: NonNegativeInt = 0

    @property
    def energy(self) -> float:
        """Total energy: device-server plus D2D."""
        return self.energy_ds + self.energy_d2d

    def __add__(self, other: "CommCounts") -> "CommCounts":
        # every round adds its counters: the fields' values directly, not fields() per call
        a, b = self.__dict__, other.__dict__
        return CommCounts(*[a[name] + b[name] for name in _COUNT_FIELDS])

    def as_dict(self) -> dict:
        out = {f.name: getattr(self, f.name) for f in fields(self)}
        out["energy"] = self.energy
        return out


_COUNT_FIELDS = tuple(f.name for f in fields(CommCounts))

#: the counters of a round, in the order of ``CommCounts.as_dict`` (``energy`` = their sum of energies)
COUNTERS: tuple[str, ...] = tuple(CommCounts().as_dict())


def count_round(traffic: RoundTraffic, directed_links: NonNegativeArray, m: PositiveArray, d: Count,
                energy: EnergyModel) -> CommCounts:
    """Counters of one round.

    directed_links[s] = number of ordered pairs (i, j), i != j, with w_ij > 0 in W_s (twice the
    number of undirected edges); m[s] = ``|C_s|``; d = model dimension.
    """
    exchanges = traffic.model_exchanges + traffic.tracking_exchanges
    messages = exchanges * int(np.sum(directed_links))
    uploads = int(np.sum(traffic.uploaders))
    downloads = int(np.sum(traffic.receivers))
    charged = traffic.model_exchanges + (traffic.tracking_exchanges
                                         if energy.charge_tracking_exchanges else 0)
    sampled_fraction = np.asarray(traffic.uploaders, dtype=np.float64) / np.asarray(m, np.float64)
    return CommCounts(
        d2d_exchanges=exchanges,
        d2d_messages=messages,
        d2d_floats=messages * d,
        uploads=uploads,
        upload_floats=uploads * traffic.upload_floats_each,
        downloads=downloads,
        download_floats=downloads * traffic.download_floats_each,
        energy_ds=float(np.dot(sampled_fraction, energy.E_ds)),
        energy_d2d=float(charged * np.sum(energy.E_d2d)),
        gradient_evaluations=int(traffic.gradients),
        client_state_floats=int(traffic.client_state_floats),
    )
