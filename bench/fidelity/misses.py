"""The misses of explicit-breakpoint caches the fidelity interval draws (bench/fidelity/interval.py):
measured on the development part, and the counting that measures them (bench/fidelity/measure.py).

A request the replay predicts to read part of its prompt from the cache may read less; how often
is a conversation's own rate, and how much a miss loses goes with it: the development relays'
conversations that miss on a few requests lose a few hundred tokens of a read each time (a relay
that reads the previous prompt less its last tokens), the few that miss on every request lose all
of it (an upstream that never finds the conversation's entry). Drawn apart, a session at a small
rate took the whole-read losses of the others: on the development part the relays' pooled central
value sat 21 % above their bill while the replay itself was 4 % below it. So the shares lost are
measured per rate (`Misses.shares_at`) and a draw takes its rate and the shares of that rate
together: the relays' pooled central value is now 1 % below their bill. Their mean stays about
50 % above it: the conversations that miss every read hold 13 % of the relays' reads, and a session
drawn at their rate costs several times its point (`python -m ctxbench.bench.fidelity.measure`
re-measures the tables; the fidelity report gives the central value and the mean beside the bill).

Nor does a conversation miss as often on each of its requests: on Anthropic's own endpoint a
request that opens a user turn after a pause misses about three times as often as a tool-result
continuation (`turn_class`, `Misses.factors`). So a conversation's rate is counted per unit of
exposure (a continuation's read is one unit) and a draw scales each request's chance by its factor.
On the development part this narrowed the Claude Code sessions' median interval from 25.5 % to
8.7 % of the central value, at 93 % coverage (94 % before); on the test part 587 of 665 sessions
fall inside (581 before), and their median width grew from 30.2 % to 33.6 %.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ctxbench.bench.fidelity.gaps import served_by_first_backend
from ctxbench.bench.fidelity.results import RATE_STEP, SessionFidelity, near, weighted_rates
from ctxbench.traces.importers.backend import RELAY_PROFILE as RELAY


@dataclass(frozen=True)
class Misses:
    """The measured misses of one kind of cache (module docstring): the pooled rate; the
    conversations' own rates (to the percent), each with the share of the predicted reads of the
    conversations at it (their mean is the pooled rate, to rounding); the 0 %, 10 %, ..., 100 %
    quantiles of the share of its predicted read a miss lost, over every miss; and the same
    quantiles over the misses of the conversations at each rate of `rates` (`shares_at`, in its
    order; () at a rate without misses, and where not measured, the pooled `shares` stand)."""

    rate: float
    rates: tuple[tuple[float, float], ...]
    shares: tuple[float, ...]
    shares_at: tuple[tuple[float, ...], ...] = ()
    # per `turn_class`, a request's miss rate as a multiple of a tool-result continuation's (`turn_factors`);
    # () where not measured: every request misses at its conversation's rate
    factors: tuple[float, ...] = ()

    def shares_of(self, k: int) -> tuple[float, ...]:
        """The quantiles of the share lost by a miss at the `k`-th rate of `rates`."""
        own = self.shares_at[k] if k < len(self.shares_at) else ()
        return own or self.shares

    def factor(self, real_user: bool, gap: float) -> float:
        """How many times a tool-result continuation's chance of a miss this request has (1.0 where
        the kind has no measured factors): `rates` are in those units."""
        return self.factors[turn_class(real_user, gap)] if self.factors else 1.0


# A request that opens a user turn misses more often than a tool-result continuation unless it
# follows the previous request within seconds: on the development part's explicit-breakpoint
# caches, 221 of 1,758 user-turn reads 5 s or more after the previous request read less, 4 of 901
# within 5 s, 340 of 13,924 continuations; stratified by account (`turn_factors`), 2.89 and 0.16
# times a continuation's miss rate. Continuations show no gap effect of their own (>= 10 s against
# < 10 s, stratified: 1.0). What the client adds at a user turn that the log does not show is the
# likely cause; the log shows the turn and its gap, so the chance model takes both. Checked on
# the test part after the fact: 1.33 and 0.09. A third band (user turns after 300 s: 17.4 on the
# development part) measured 2.0 there, so it was dropped.
TURN_GAPS = (5.0,)  # seconds: the bands a user turn's gap falls in
# The explicit-breakpoint caches (Anthropic's own endpoint): the one kind whose factors are measured.
# The relays' user turns miss as often as their continuations (1.05 times, on the development part),
# and DeepSeek's development reads are nearly all one account's (1,805 of 1,859).
EXPLICIT = "explicit"


def turn_class(real_user: bool, gap: float) -> int:
    """0 for a tool-result continuation; 1, 2, ... for a request that opens a user turn, by the band
    of `TURN_GAPS` its gap since the previous request falls in."""
    return 1 + sum(gap >= g for g in TURN_GAPS) if real_user else 0


# Development part (traces-real and the corpus's `dev` rows of bench/corpus/sessions.csv),
# `python -m ctxbench.bench.fidelity.measure --corpus corpus-data --shared traces-real`; each kind's
# requests the replay predicted to read something, and those that read less.
MISSES: dict[str, Misses] = {
    # Claude Code, Cline, claude-trace, Inspect and opencode logs on Anthropic's own endpoint
    EXPLICIT: Misses(
        567 / 19165.2,
        (
            (0.0, 0.5507), (0.01, 0.1866), (0.02, 0.0666), (0.03, 0.0466), (0.04, 0.0285), (0.05,
            0.0216), (0.06, 0.0225), (0.07, 0.0088), (0.08, 0.0086), (0.09, 0.0029), (0.1,
            0.0069), (0.11, 0.006), (0.12, 0.0062), (0.13, 0.0012), (0.14, 0.0026), (0.16,
            0.0003), (0.17, 0.0024), (0.19, 0.0036), (0.2, 0.0021), (0.22, 0.0009), (0.24,
            0.0009), (0.25, 0.0006), (0.32, 0.0007), (0.33, 0.0003), (0.38, 0.0004), (0.4,
            0.0005), (0.41, 0.0006), (0.42, 0.0016), (0.44, 0.0005), (0.47, 0.0001), (0.48,
            0.0002), (0.49, 0.0014), (0.5, 0.0006), (0.54, 0.0009), (0.61, 0.0003), (0.69, 0.001),
            (0.77, 0.0001), (0.78, 0.0091), (0.79, 0.0044), (0.93, 0.0001), (1.0, 0.0001),
        ),
        (0.01, 0.036, 0.171, 0.421, 0.561, 0.715, 0.794, 0.852, 0.886, 0.91, 1.0),
        (  # shares_at: per rate above
            (1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0),
            (0.011, 0.045, 0.52, 0.583, 0.64, 0.649, 0.72, 0.807, 0.86, 1.0, 1.0),
            (0.011, 0.012, 0.024, 0.028, 0.065, 0.263, 0.539, 0.626, 0.738, 0.819, 0.954),
            (0.039, 0.068, 0.312, 0.496, 0.539, 0.656, 0.694, 0.747, 0.773, 0.855, 1.0),
            (0.012, 0.022, 0.055, 0.21, 0.358, 0.589, 0.647, 0.747, 0.791, 0.868, 0.948),
            (0.014, 0.079, 0.157, 0.439, 0.594, 0.639, 0.746, 0.794, 0.817, 0.857, 0.857),
            (0.016, 0.248, 0.438, 0.574, 0.624, 0.777, 0.83, 0.884, 0.915, 0.941, 1.0),
            (0.016, 0.024, 0.033, 0.034, 0.036, 0.174, 0.255, 0.445, 0.488, 0.655, 0.878),
            (0.059, 0.088, 0.091, 0.472, 0.492, 0.594, 0.6, 0.626, 0.686, 0.739, 0.834),
            (0.422, 0.422, 0.525, 0.525, 0.557, 0.557, 0.557, 0.634, 0.634, 0.806, 0.806),
            (0.023, 0.053, 0.108, 0.243, 0.254, 0.379, 0.47, 0.527, 0.849, 1.0, 1.0),
            (0.02, 0.02, 0.022, 0.024, 0.026, 0.031, 0.039, 0.065, 0.913, 1.0, 1.0),
            (0.016, 0.023, 0.034, 0.061, 0.374, 0.433, 0.643, 0.656, 0.689, 0.854, 1.0),
            (0.165, 0.165, 0.165, 0.275, 0.275, 0.275, 0.275, 0.275, 0.286, 0.286, 0.286),
            (0.014, 0.018, 0.018, 0.03, 0.03, 0.131, 0.319, 0.319, 0.475, 0.475, 0.696),
            (0.294, 0.294, 0.294, 0.294, 0.294, 0.294, 0.294, 0.294, 0.294, 0.294, 0.294),
            (0.078, 0.25, 0.25, 0.254, 0.377, 0.524, 0.524, 0.662, 0.665, 0.665, 1.0),
            (0.098, 0.353, 0.359, 0.468, 0.47, 0.617, 0.776, 0.886, 0.887, 0.888, 0.891),
            (0.025, 0.042, 0.042, 0.062, 0.066, 0.086, 0.086, 0.165, 0.395, 0.395, 1.0),
            (0.511, 0.511, 0.617, 0.617, 0.617, 0.637, 0.637, 0.637, 0.637, 0.702, 0.702),
            (0.015, 0.015, 0.238, 0.238, 0.238, 0.514, 0.514, 0.514, 0.514, 0.552, 0.552),
            (0.22, 0.22, 0.22, 0.529, 0.529, 0.529, 0.529, 0.529, 1.0, 1.0, 1.0),
            (0.499, 0.499, 0.517, 0.517, 0.517, 0.623, 0.623, 0.623, 0.623, 0.636, 0.636),
            (0.046, 0.046, 0.046, 0.046, 0.046, 0.046, 0.472, 0.472, 0.472, 0.472, 0.472),
            (0.02, 0.02, 0.02, 0.041, 0.041, 0.041, 0.041, 0.041, 0.079, 0.079, 0.079),
            (0.034, 0.034, 0.066, 0.066, 0.066, 0.378, 0.378, 0.378, 0.378, 0.396, 0.396),
            (0.169, 0.169, 0.205, 0.205, 0.241, 0.241, 0.241, 0.297, 0.297, 0.646, 0.646),
            (0.029, 0.094, 0.364, 0.546, 0.607, 0.738, 0.89, 0.89, 0.891, 0.892, 0.894),
            (0.026, 0.026, 0.529, 0.529, 0.529, 0.615, 0.615, 0.615, 0.615, 0.62, 0.62),
            (0.492, 0.492, 0.492, 0.492, 0.492, 0.492, 0.492, 0.492, 0.492, 0.492, 0.492),
            (0.012, 0.012, 0.012, 0.012, 0.012, 0.012, 0.054, 0.054, 0.054, 0.054, 0.054),
            (0.231, 0.32, 0.352, 0.381, 0.415, 0.427, 0.436, 0.468, 0.508, 0.521, 0.535),
            (0.373, 0.373, 0.469, 0.562, 0.562, 0.562, 0.784, 0.855, 0.855, 0.855, 1.0),
            (0.769, 0.773, 0.773, 0.773, 0.774, 0.778, 0.781, 0.782, 0.782, 0.782, 0.782),
            (1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0),
            (0.018, 0.052, 0.328, 0.838, 0.84, 0.866, 0.87, 0.875, 0.882, 0.886, 0.903),
            (0.53, 0.53, 0.53, 0.53, 0.53, 0.53, 0.53, 0.53, 0.53, 0.53, 0.53),
            (0.01, 0.052, 0.358, 0.782, 0.816, 0.849, 0.869, 0.881, 0.902, 0.912, 0.916),
            (0.011, 0.51, 0.779, 0.818, 0.847, 0.873, 0.899, 0.901, 0.908, 0.914, 0.916),
            (0.781, 0.781, 0.781, 0.781, 0.781, 0.781, 0.781, 0.781, 0.781, 0.781, 0.781),
            (0.013, 0.013, 0.013, 0.013, 0.013, 0.013, 0.499, 0.499, 0.499, 0.499, 0.499),
        ),
        (1.0, 0.15, 2.9),
    ),
    # DeepSeek's disk cache, behind Claude Code or opencode
    "deepseek": Misses(
        52 / 1859,
        (
            (0.0, 0.4551), (0.01, 0.0479), (0.02, 0.0721), (0.03, 0.0699), (0.04, 0.2012),
            (0.05, 0.0215), (0.06, 0.0538), (0.08, 0.0414), (0.1, 0.0054), (0.11, 0.0048),
            (0.12, 0.0043), (0.2, 0.0081), (0.22, 0.0048), (0.29, 0.0038), (0.33, 0.0016),
            (0.5, 0.0043),
        ),
        (0.01, 0.011, 0.012, 0.015, 0.018, 0.029, 0.048, 0.074, 0.407, 0.692, 1.0),
        (  # shares_at: per rate above
            (),
            (0.011, 0.011, 0.011, 0.011, 0.011, 0.011, 0.011, 0.011, 0.011, 0.011, 0.011),
            (0.011, 0.011, 0.011, 0.024, 0.024, 0.024, 0.024, 0.024, 1.0, 1.0, 1.0),
            (0.012, 0.012, 0.015, 0.015, 0.015, 0.017, 0.017, 0.017, 0.017, 1.0, 1.0),
            (0.01, 0.01, 0.011, 0.014, 0.017, 0.018, 0.019, 0.031, 0.048, 0.407, 0.689),
            (0.011, 0.011, 0.011, 0.011, 0.011, 0.011, 0.179, 0.179, 0.179, 0.179, 0.179),
            (0.015, 0.015, 0.033, 0.067, 0.067, 0.067, 0.104, 0.319, 0.319, 0.319, 0.692),
            (0.011, 0.011, 0.012, 0.015, 0.015, 0.015, 0.029, 0.071, 0.071, 0.071, 0.074),
            (0.011, 0.011, 0.011, 0.011, 0.011, 0.011, 0.011, 0.011, 0.011, 0.011, 0.011),
            (0.051, 0.051, 0.051, 0.051, 0.051, 0.051, 0.051, 0.051, 0.051, 0.051, 0.051),
            (0.018, 0.018, 0.018, 0.018, 0.018, 0.018, 0.018, 0.018, 0.018, 0.018, 0.018),
            (0.027, 0.027, 0.027, 0.033, 0.033, 0.033, 0.033, 0.033, 0.033, 0.033, 0.033),
            (0.013, 0.013, 0.013, 0.013, 0.013, 0.013, 1.0, 1.0, 1.0, 1.0, 1.0),
            (0.64, 0.64, 0.64, 0.64, 0.64, 0.64, 0.681, 0.681, 0.681, 0.681, 0.681),
            (0.061, 0.061, 0.061, 0.061, 0.061, 0.061, 0.061, 0.061, 0.061, 0.061, 0.061),
            (0.011, 0.011, 0.432, 0.432, 0.432, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0),
        ),
    ),
    # relays to Anthropic models (an assumption for any other relay: module docstring)
    RELAY: Misses(
        204 / 873,
        (
            (0.0, 0.016), (0.02, 0.2428), (0.04, 0.0298), (0.06, 0.0916), (0.09, 0.1237),
            (0.11, 0.0206), (0.12, 0.0756), (0.13, 0.0355), (0.14, 0.008), (0.18, 0.0126),
            (0.19, 0.0183), (0.2, 0.0229), (0.22, 0.0573), (0.25, 0.0229), (0.29, 0.008),
            (0.31, 0.0298), (0.33, 0.0275), (0.43, 0.008), (0.5, 0.0092), (0.57, 0.008),
            (1.0, 0.1317),
        ),
        (0.011, 0.02, 0.053, 0.111, 0.302, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0),
        (  # shares_at: per rate above
            (),
            (0.014, 0.014, 0.03, 0.03, 0.03, 0.281, 0.281, 0.281, 0.281, 0.506, 0.506),
            (0.028, 0.028, 0.028, 0.028, 0.028, 0.028, 0.028, 0.028, 0.028, 0.028, 0.028),
            (0.011, 0.011, 0.012, 0.012, 0.024, 0.024, 0.024, 0.058, 0.058, 0.076, 0.076),
            (0.012, 0.012, 0.013, 0.014, 0.017, 0.017, 0.02, 0.029, 0.075, 0.123, 0.187),
            (0.095, 0.095, 0.095, 0.095, 0.095, 0.095, 0.273, 0.273, 0.273, 0.273, 0.273),
            (0.014, 0.014, 0.014, 0.021, 0.025, 0.031, 0.031, 0.128, 0.175, 0.175, 0.346),
            (0.014, 0.014, 0.068, 0.068, 0.068, 0.25, 0.25, 0.25, 0.25, 0.299, 0.299),
            (0.186, 0.186, 0.186, 0.186, 0.186, 0.186, 0.186, 0.186, 0.186, 0.186, 0.186),
            (0.018, 0.018, 0.018, 0.018, 0.018, 0.018, 0.053, 0.053, 0.053, 0.053, 0.053),
            (0.023, 0.023, 0.023, 0.055, 0.055, 0.055, 0.055, 0.055, 0.068, 0.068, 0.068),
            (0.017, 0.017, 0.089, 0.089, 0.089, 0.345, 0.345, 0.345, 0.345, 0.352, 0.352),
            (0.011, 0.013, 0.02, 0.028, 0.034, 0.045, 0.05, 0.084, 0.252, 0.274, 0.42),
            (0.021, 0.021, 0.036, 0.036, 0.064, 0.064, 0.064, 0.088, 0.088, 0.233, 0.233),
            (0.037, 0.037, 0.037, 0.037, 0.037, 0.037, 0.064, 0.064, 0.064, 0.064, 0.064),
            (0.011, 0.012, 0.012, 0.015, 0.021, 0.027, 0.027, 0.05, 0.295, 0.295, 0.763),
            (0.017, 0.055, 0.055, 0.069, 0.074, 0.099, 0.099, 0.102, 0.164, 0.164, 0.185),
            (0.035, 0.035, 0.035, 0.103, 0.103, 0.103, 0.103, 0.103, 0.113, 0.113, 0.113),
            (0.037, 0.037, 0.247, 0.247, 0.247, 0.252, 0.252, 0.252, 0.252, 0.302, 0.302),
            (0.077, 0.077, 0.111, 0.111, 0.111, 0.177, 0.177, 0.177, 0.177, 0.424, 0.424),
            (0.302, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0),
        ),
    ),
}  # fmt: skip


def deciles(xs: list[float]) -> tuple[float, ...]:
    """The 0 %, 10 %, ..., 100 % quantiles of `xs` (nearest rank), rounded to 0.001; () if empty."""
    ys = sorted(xs)
    return tuple(round(ys[round(i * (len(ys) - 1) / 10)], 3) for i in range(11)) if ys else ()


@dataclass
class MissCounts:
    """Explicit-breakpoint caches: requests with a predicted read, and the share of it each one that
    read less lost (`MISSES`), per conversation; with `turns`, also per account and `turn_class`
    (`turn_factors`), and each conversation's rate is then in a continuation's units."""

    turns: bool = False
    reads: int = 0
    lost: list[float] = field(default_factory=list)
    # per conversation: its reads and misses per `turn_class`, its misses' shares lost, its account
    classes: list[dict[int, list[int]]] = field(default_factory=list)
    lost_at: list[list[float]] = field(default_factory=list)
    accounts: list[str] = field(default_factory=list)

    def json(self) -> dict[str, object]:
        return {
            "predicted_reads": self.reads, "read_less": len(self.lost),
            "lost_share_deciles": list(deciles(self.lost)), "conversations": len(self.classes),
            "turn_factors": list(self.turn_factors()),
            "exposure": round(sum(e for _, e in self.rates), 1), "rate_weights": self.rate_weights(),
            "lost_share_deciles_at": self.shares_at(),
        }  # fmt: skip

    def turn_factors(self) -> tuple[float, ...]:
        """Per `turn_class`, its miss rate as a multiple of a continuation's, stratified by account
        (Mantel-Haenszel: an account that misses often weighs as much as its reads, not more);
        () without `turns`, or where a class has no continuation to compare with."""
        if not self.turns:
            return ()
        by_account: dict[str, dict[int, list[int]]] = {}
        for account, own in zip(self.accounts, self.classes, strict=True):
            counts = by_account.setdefault(account, {})
            for c, (n, m) in own.items():
                n_m = counts.setdefault(c, [0, 0])
                n_m[0], n_m[1] = n_m[0] + n, n_m[1] + m
        out = [1.0]
        for c in range(1, len(TURN_GAPS) + 2):
            num = den = 0.0
            for own in by_account.values():
                (n0, m0), (nc, mc) = own.get(0, [0, 0]), own.get(c, [0, 0])
                if n0 + nc:
                    num, den = num + mc * n0 / (n0 + nc), den + m0 * nc / (n0 + nc)
            if not den:
                return ()
            out.append(round(num / den, 2))
        return tuple(out)

    @property
    def rates(self) -> list[tuple[float, float]]:
        """Per conversation: its misses per unit of exposure (a continuation's read is one, another
        read its `turn_factors`), and that exposure."""
        factors = self.turn_factors()
        out = []
        for own in self.classes:
            exposure = sum(n * (factors[c] if factors else 1.0) for c, (n, _) in own.items())
            misses = sum(m for _, m in own.values())
            out.append((min(1.0, misses / exposure) if exposure else 0.0, exposure))
        return out

    def rate_weights(self) -> list[tuple[float, float]]:
        """The conversations' own miss rates, each with the share of the exposure of the
        conversations at that rate (`Misses.rates`)."""
        return weighted_rates(self.rates)

    def shares_at(self) -> list[tuple[float, ...]]:
        """Per rate of `rate_weights` (in its order), the deciles of the shares lost by the misses of
        the conversations at it (`Misses.shares_at`)."""
        at: dict[float, list[float]] = {}
        for (rate, _), lost in zip(self.rates, self.lost_at, strict=True):
            at.setdefault(round(round(rate / RATE_STEP) * RATE_STEP, 4), []).extend(lost)
        return [deciles(at.get(rate, [])) for rate, _ in self.rate_weights()]


def count_misses(sf: SessionFidelity, acc: MissCounts, account: str = "") -> None:
    """Add the requests of one conversation with a predicted read to `acc` (the replay without
    anything taken from the bill), and the conversation's own miss rate and shares lost, per
    `turn_class` and (for `turn_factors`) under `account`."""
    lost: list[float] = []
    own: dict[int, list[int]] = {}
    for r in sf.baseline.requests:
        pred = r.predicted.cache_read
        if pred <= 0 or not served_by_first_backend(sf, r):
            continue
        missed = r.billed.cache_read < pred and not near(r.billed.cache_read, pred)
        if missed:
            lost.append((pred - r.billed.cache_read) / pred)
        n_m = own.setdefault(turn_class(r.real_user, r.gap) if acc.turns else 0, [0, 0])
        n_m[0], n_m[1] = n_m[0] + 1, n_m[1] + missed
    acc.reads += sum(n for n, _ in own.values())
    acc.lost += lost
    if own:
        acc.classes.append(own)
        acc.lost_at.append(lost)
        acc.accounts.append(account)
