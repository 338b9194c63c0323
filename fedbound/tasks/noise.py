"""Gradient noise with exactly known second moment, drawn from a seeded torch.Generator.

* ``gradient_noise(shape, sigma, kind, generator)``: additive noise for every row of a stacked (n, d)
  gradient with E||noise_i||^2 = sigma^2 exactly, independent across rows and calls:
  - "gaussian": N(0, (sigma^2/d) I_d), the injector of sdgt.md sec. 7.3 and afga.md sec. 7.2 (Q1:
    g = grad f_i + sigma z / sqrt(d));
  - "sphere": sigma * z/||z||, uniform on the sphere of radius sigma. ||noise|| = sigma surely, so bounded
    gradients stay bounded (AFGA Assumption 4.3 [000 L255-L256]; afga.md Q2 asks for bounded noise).
* ``scalar_noise(law, param, u)``: heavy-tailed and Gaussian laws by inverse CDF of uniforms
  (FedAda2 sec. 3, fedada2.md sec. 1.3/4.1/4.2):
  - "student_t" with nu > 0 degrees of freedom: variance nu/(nu-2) for nu > 2, infinite for nu <= 2;
  - "cauchy" with scale gamma: no mean, infinite variance;
  - "gaussian" with standard deviation s: variance s^2.
"""
from __future__ import annotations

import math
from typing import Annotated, Literal

import numpy as np
import torch

from fedbound import validate
from fedbound.argtypes import Count, NonNegative, NonNegativeInt, PositiveArray, Range
from fedbound.errors import require

NOISE_KINDS = ("gaussian", "sphere")
SCALAR_LAWS = ("student_t", "cauchy", "gaussian")
#: uniforms in the open interval (0, 1), as a tensor
_OpenUniforms = Annotated[torch.Tensor, Range(0.0, 1.0, low_open=True, high_open=True)]


def gradient_noise(shape: tuple[NonNegativeInt, Count], sigma: float, kind: str, generator: torch.Generator,
                   dtype: torch.dtype = torch.float64) -> torch.Tensor:
    """Noise of shape (n, d) whose rows have E||row||^2 = sigma^2 exactly (see module docstring)."""
    check_noise(sigma, kind)
    n, d = shape
    z = torch.randn(n, d, generator=generator, dtype=torch.float64, device=generator.device)
    return noise_from_normals(z, sigma, kind).to(device=torch.get_default_device(), dtype=dtype)


def noise_from_normals(z: torch.Tensor, sigma: NonNegative, kind: Literal["gaussian", "sphere"]) -> torch.Tensor:
    """The noise of :func:`gradient_noise` from its standard normal draws z (n, d), float64."""
    require(z.ndim == 2 and z.shape[1] >= 1, f"z must have shape (n, d) with d >= 1, got {tuple(z.shape)}")
    if kind == "gaussian":
        return z * (sigma / math.sqrt(z.shape[1]))
    return z * (sigma / torch.linalg.vector_norm(z, dim=1, keepdim=True))


def check_noise(sigma: float, kind: str) -> None:
    validate.one_of("noise kind", kind, NOISE_KINDS)
    validate.number("sigma", sigma, low=0, high=1e100)   # sigma^2 must stay a float


def open_uniform(shape: tuple[NonNegativeInt, ...], generator: torch.Generator) -> torch.Tensor:
    """Uniforms on (0, 1), symmetric about 1/2: torch.rand's grid k 2^-53 shifted by 2^-54."""
    return torch.rand(shape, generator=generator, dtype=torch.float64, device=generator.device) \
        + 2.0**-54


def check_law(law: str, param: float) -> None:
    validate.one_of("noise law", law, SCALAR_LAWS)
    validate.number(f"{law} parameter", param, low=0, low_open=True)


def law_variance(law: str, param: float) -> float:
    """Variance of one draw: nu/(nu-2) (student_t, nu > 2), inf (student_t nu <= 2, cauchy), s^2 (gaussian)."""
    check_law(law, param)
    if law == "student_t":
        return param / (param - 2.0) if param > 2.0 else float("inf")
    if law == "cauchy":
        return float("inf")
    return param**2


def scalar_noise(laws: list[Literal["student_t", "cauchy", "gaussian"]], params: PositiveArray,
                 u: _OpenUniforms) -> torch.Tensor:
    """Inverse-CDF transform of uniforms u (n, d): row i follows laws[i] with parameter params[i]."""
    import scipy.special as sps  # scipy: 0.3 s of start-up, only for these noise laws

    require(u.ndim == 2 and len(laws) == u.shape[0] and np.shape(params) == (u.shape[0],),
            f"laws and params must have one entry per row of u {tuple(u.shape)}, got "
            f"{len(laws)} laws and params of shape {np.shape(params)}")

    uu = u.numpy()
    out = np.empty_like(uu)
    for law in SCALAR_LAWS:
        rows = np.array([lw == law for lw in laws])
        if not rows.any():
            continue
        p = np.asarray(params, dtype=np.float64)[rows][:, None]
        if law == "student_t":
            out[rows] = sps.stdtrit(p, uu[rows])
        elif law == "cauchy":
            out[rows] = p * np.tan(np.pi * (uu[rows] - 0.5))
        else:
            out[rows] = p * sps.ndtri(uu[rows])
    return torch.from_numpy(out)
