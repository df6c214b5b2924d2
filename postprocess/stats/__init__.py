"""Statistics for per-question correctness: intervals, bootstraps and paired tests.

Pure functions on arrays and counts; each returns a frozen dataclass whose fields are documented
and never change with the arguments (``.as_dict()`` gives a flat dict for a table row).
Randomness enters only as an integer ``seed`` (derive it with
``vdg_tasks.vocabulary.seeding.stable_seed``); every bootstrap uses ``np.random.default_rng(seed)``.

Every test and interval that scipy.stats or statsmodels provides is theirs (each function's docstring names the
call); written here is only what neither has, each module's docstring saying why: the percentile bootstraps,
Tango's score interval for a paired difference (clustered or not), the exact sign-flip test, McNemar's
formulas over arrays, and Holm's adjustment (statsmodels' runs the garbage collector on every call).

Modules: ``records`` (the result dataclasses), ``checks`` (argument validators), ``intervals`` (Wilson and
the bootstraps), ``paired_proportions`` (Tango's score interval for a paired binary difference),
``distributions`` (scipy.stats' distribution functions), ``hypothesis_tests``, ``correlations`` and
``jsonable`` (``json_ready``); callers import every name from the package itself.

Conventions
-----------
- Bootstrap CIs are percentile intervals: ``np.quantile`` (default ``linear`` method) of the
  resampled means at ``(1 - level) / 2`` and ``1 - (1 - level) / 2``.
- Resampling n items with replacement is the same, in distribution, as drawing multinomial counts
  over the distinct values (or distinct cluster (sum, size) pairs) with probabilities equal to
  their frequencies. When there are few distinct values (a VDG in {-1, 0, +1}) the counts are drawn
  directly (``resampler="multinomial"``); otherwise item indices are drawn
  (``resampler="index"``). Both are vectorized over resamples; ``"auto"`` picks by the data only,
  so a result is a function of (data, seed, n_resamples, level).
- Exact bootstrap CIs (``method="exact"``): resampling n per-item values with replacement makes their sum a sum
  of n independent draws from the values' empirical distribution. When the values lie on a lattice (integers, or
  halves: a VDG in {-1, 0, +1}, a correct flag, a paired difference of judge scores in steps of 0.5) the
  distribution of that sum is the n-th convolution power of the value frequencies, computed exactly (one FFT), and
  its percentiles (the limit of the Monte Carlo percentiles as resamples grow) are the CI; no seed is used. Values
  off a lattice, or a cluster bootstrap (resampled units are (sum, size) pairs), fall back to Monte Carlo, with
  each endpoint's estimated Monte Carlo standard error (``mc_se_low``, ``mc_se_high``) and, given
  ``mc_se_target``, as many resamples as it takes to bring both below it.
- Paired binary differences (a - b in {-1, 0, +1}, e.g. a VDG) get Tango's asymptotic score interval
  (``paired_difference_ci``; Tango 1998, recommended by Fagerland, Lydersen & Laake 2014): no resampling, and
  positive width even with no discordant item, where the percentile bootstrap gives [0, 0]. With clusters its
  variance is scaled by a design effect evaluated at each hypothesised difference (the module's docstring).
  Graded (non-binary) differences keep the bootstrap.
- McNemar: b01 counts pairs with (a, b) = (0, 1), b10 pairs with (1, 0). The corrected statistic
  is ``(|b01 - b10| - 1)^2 / (b01 + b10)`` exactly as statsmodels
  ``mcnemar(table, exact=False, correction=True)`` computes it: not clamped at zero, so
  ``b01 == b10`` gives ``1 / (b01 + b10)`` rather than 0 (p slightly below 1).
"""

from __future__ import annotations

from postprocess.stats.correlations import MIN_CORRELATION_POINTS as MIN_CORRELATION_POINTS
from postprocess.stats.correlations import pearson, spearman
from postprocess.stats.distributions import binom_cdf, binom_pmf, binom_sf, chi2_sf, normal_sf, t_sf
from postprocess.stats.hypothesis_tests import MCNEMAR_CHI2 as MCNEMAR_CHI2
from postprocess.stats.hypothesis_tests import MCNEMAR_EXACT as MCNEMAR_EXACT
from postprocess.stats.hypothesis_tests import MCNEMAR_EXACT_BELOW as MCNEMAR_EXACT_BELOW
from postprocess.stats.hypothesis_tests import (
    binomial_test,
    chi2_independence,
    chi2_uniform,
    cohen_h,
    fisher,
    holm,
    mcnemar,
    mcnemar_many,
    mcnemar_p,
    sign_flip_test,
    tost_paired,
)
from postprocess.stats.hypothesis_tests import chi2_counts as chi2_counts
from postprocess.stats.hypothesis_tests import welch as welch
from postprocess.stats.intervals import MAX_RESAMPLES as MAX_RESAMPLES
from postprocess.stats.intervals import (
    MC_SE_BATCHES,
    BootstrapMethod,
    Resampler,
    bootstrap_mean,
    paired_bootstrap_diff,
    two_sided_z,
    wilson,
)
from postprocess.stats.intervals import percentile_interval as percentile_interval
from postprocess.stats.intervals import resampled_means as resampled_means
from postprocess.stats.jsonable import json_ready as json_ready
from postprocess.stats.paired_proportions import paired_difference_ci
from postprocess.stats.records import (
    BinomialResult,
    BootstrapCI,
    Chi2Result,
    DifferenceCI,
    FisherResult,
    Interval,
    McNemarResult,
    SignFlipResult,
    TostResult,
)
from postprocess.stats.records import WelchResult as WelchResult

__all__ = [
    "BinomialResult",
    "BootstrapCI",
    "BootstrapMethod",
    "MC_SE_BATCHES",
    "SignFlipResult",
    "Chi2Result",
    "DifferenceCI",
    "FisherResult",
    "Interval",
    "McNemarResult",
    "Resampler",
    "TostResult",
    "binomial_test",
    "bootstrap_mean",
    "binom_cdf",
    "binom_pmf",
    "binom_sf",
    "chi2_independence",
    "chi2_sf",
    "chi2_uniform",
    "cohen_h",
    "fisher",
    "holm",
    "mcnemar",
    "mcnemar_many",
    "mcnemar_p",
    "normal_sf",
    "paired_bootstrap_diff",
    "paired_difference_ci",
    "pearson",
    "sign_flip_test",
    "spearman",
    "t_sf",
    "tost_paired",
    "two_sided_z",
    "wilson",
]
