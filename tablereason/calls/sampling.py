"""How every request of a method run is sampled: ``Sampling``, and the settings that give it.

A method's settings carry ``temperature``, ``top_p`` and ``seed``
(:class:`SamplingSettings`); the door applies them to every request it sends
(:meth:`Sampling.apply`): a temperature that is set replaces each call's own (greedy
calls included), ``top_p`` goes with every request, and the seed goes with every
sampled request whose call gives none of its own. Left at their defaults, a method asks
as it did before (each call's own temperature, ``top_p`` 1, no seed).

The seed is what makes sampled runs replayable: the response cache keys a seeded request
by its seed, so the k samples of one prompt, each run with its own seed, are k entries,
and a replay returns the same k (see docs/strategies.md).

Example:
    >>> Sampling(temperature=0.7, seed=3).apply(temperature=0.0, seed=None)
    (0.7, 1.0, 3)
    >>> Sampling().apply(temperature=0.5, seed=None)
    (0.5, 1.0, None)
    >>> SamplingSettings(temperature=0.7, top_p=0.9).sampling()
    Sampling(temperature=0.7, top_p=0.9, seed=None)
"""

from __future__ import annotations

from dataclasses import dataclass

from pydantic import BaseModel, Field

from tablereason.errors import ConfigurationError


@dataclass(frozen=True)
class Sampling:
    """The sampling of every request of one run.

    Attributes:
        temperature: Every request's temperature; ``None``: each call's own.
        top_p: Nucleus sampling bound sent with every request (1: none).
        seed: Seed of sampled requests whose call gives none.
    """

    temperature: float | None = None
    top_p: float = 1.0
    seed: int | None = None

    def apply(self, *, temperature: float, seed: int | None) -> tuple[float, float, int | None]:
        """``(temperature, top_p, seed)`` of a call that asks for ``temperature`` and ``seed``.

        The seed is ``None`` for a greedy request (temperature 0): it would only split
        the cache's entries of identical requests.
        """
        used = temperature if self.temperature is None else self.temperature
        chosen = seed if seed is not None else self.seed
        return used, self.top_p, chosen if used > 0 else None

    @classmethod
    def checked(
        cls, temperature: float | None = None, top_p: float = 1.0, seed: int | None = None
    ) -> Sampling:
        """The sampling of these settings, validated as :class:`SamplingSettings` are.

        Raises:
            ConfigurationError: For a temperature outside [0, 2] or a top_p outside (0, 1].

        Example:
            >>> Sampling.checked(top_p=0)
            Traceback (most recent call last):
            ...
            tablereason.errors.ConfigurationError: invalid sampling: top_p must be in (0, 1], got 0
        """
        if temperature is not None and not 0.0 <= temperature <= 2.0:
            raise ConfigurationError(
                f"invalid sampling: temperature must be in [0, 2], got {temperature}"
            )
        if not 0.0 < top_p <= 1.0:
            raise ConfigurationError(f"invalid sampling: top_p must be in (0, 1], got {top_p}")
        return cls(temperature=temperature, top_p=top_p, seed=seed)

    def with_seed(self, seed: int | None) -> Sampling:
        """The same sampling with another seed (one sample of several)."""
        return Sampling(temperature=self.temperature, top_p=self.top_p, seed=seed)


class SamplingSettings(BaseModel):
    """The sampling settings every method's settings carry (``--option temperature=0.7``).

    Attributes:
        temperature: Sampling temperature of every request; ``None`` (the default): each
            call's own (most are greedy).
        top_p: Nucleus sampling bound of every request.
        seed: Seed sent with sampled requests, so a sampled run replays exactly.
    """

    temperature: float | None = Field(default=None, ge=0.0, le=2.0)
    top_p: float = Field(default=1.0, gt=0.0, le=1.0)
    seed: int | None = None

    def sampling(self) -> Sampling:
        """The :class:`Sampling` these settings give."""
        return Sampling(temperature=self.temperature, top_p=self.top_p, seed=self.seed)
