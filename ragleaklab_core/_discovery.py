"""Plugin discovery: entry-point groups, loading by name with stevedore, and the plugin listing.

Only the plugins a command names are imported (stevedore's ``NamedExtensionManager`` checks names
before importing), so a broken plugin that a command does not use cannot affect it. Failures are
never logged and swallowed: they are collected, with the distribution that ships the plugin, and
raised as one :class:`PluginError`.
"""

from __future__ import annotations

import dataclasses
import difflib
import importlib.metadata
from collections.abc import Mapping, Sequence
from typing import Any

import attrs
from attrs import frozen
from stevedore import NamedExtensionManager

from ragleaklab_core._log import get_logger
from ragleaklab_core._redact import literal_secrets, redact, register_secrets
from ragleaklab_core.config import plugin_options, structure
from ragleaklab_core.contracts import fitters, judges, metrics, packs, reporters, targets
from ragleaklab_core.contracts.fitters import FitterTraits
from ragleaklab_core.contracts.groups import (
    ALTERNATIVES,
    PROTOCOLS,
    Traits,
    group_kind,
    read_traits,
    required_members,
)
from ragleaklab_core.contracts.judges import JudgeTraits
from ragleaklab_core.contracts.metrics import MetricTraits, metric_traits
from ragleaklab_core.contracts.packs import PackTraits
from ragleaklab_core.contracts.spelling import Misspelling, missing_hint, misspelt_members
from ragleaklab_core.contracts.targets import TargetTraits
from ragleaklab_core.errors import (
    ConfigError,
    PluginContractError,
    PluginError,
    PluginLoadFailure,
    RagleaklabError,
    suggestions,
)
from ragleaklab_core.values import PackInfo

PACKS = packs.GROUP
METRICS = metrics.GROUP
FITTERS = fitters.GROUP
TARGETS = targets.GROUP
REPORTERS = reporters.GROUP
JUDGES = judges.GROUP
GROUPS: tuple[str, ...] = (PACKS, METRICS, FITTERS, TARGETS, REPORTERS, JUDGES)
#: The matchers metrics load by name (the built-in metrics' ``matcher`` option).
MATCHERS = "ragleaklab.matchers"
#: Every entry-point group named ``ragleaklab...`` that ragleaklab reads: an entry point under any
#: other such group (``ragleaklab.reporter``) is read by nothing, and is named where it matters.
READ_GROUPS: tuple[str, ...] = (*GROUPS, MATCHERS)

log = get_logger(__name__)


@frozen
class _Offer:
    name: str
    target: str
    dist: str
    version: str

    @property
    def provider(self) -> str:
        return f"{self.dist} {self.version}"


def _offers(group: str) -> list[_Offer]:
    """Every entry point in *group*, from metadata (imports nothing), one per distribution."""
    seen: dict[tuple[str, str], _Offer] = {}
    for ep in importlib.metadata.entry_points(group=group):
        dist = ep.dist.metadata["Name"] if ep.dist else "<unknown>"
        version = ep.dist.version if ep.dist else "?"
        # The same distribution can be visible twice on sys.path (say, a build dir and site).
        seen.setdefault((ep.name, _normalise(dist)), _Offer(ep.name, ep.value, dist, version))
    return sorted(seen.values(), key=lambda o: (o.name, _normalise(o.dist)))


def _normalise(dist: str) -> str:
    return dist.lower().replace("_", "-").replace(".", "-")


def available_names(group: str) -> list[str]:
    """Names installed in *group*, read from metadata; nothing is imported.

    .. versionadded:: 0.1
    """
    return sorted({o.name for o in _offers(group)})


@frozen
class LoadedPlugin:
    """A plugin built from its options, with the provenance reports record.

    Attributes:
        group: The entry-point group.
        name: The entry-point name users typed.
        target: ``module:object`` the entry point points at.
        provider: ``"<distribution> <version>"`` that ships it.
        obj: The plugin instance.
        options: The resolved options (every init field), JSON-compatible.
        traits: Its optional members (the group's table in :mod:`ragleaklab_core.contracts`),
            read from *obj* when the record is made, so a record evolved with another object (a
            metric bound to a pack's documents) reads that object's.
    """

    group: str
    name: str
    target: str
    provider: str
    obj: Any
    options: Mapping[str, Any]
    traits: Traits | None = attrs.field(init=False, eq=False, repr=False)

    @traits.default
    def _read_traits(self) -> Traits | None:
        return read_traits(self.group, self.obj)

    def _traits(self, kind: type[Any]) -> Any:
        if not isinstance(self.traits, kind):
            raise TypeError(f"{self.group}:{self.name} has no {kind.__name__}")
        return self.traits

    @property
    def metric_traits(self) -> MetricTraits:
        """The traits of a metric (TypeError for a plugin of another group)."""
        traits: MetricTraits = self._traits(MetricTraits)
        return traits

    @property
    def target_traits(self) -> TargetTraits:
        """The traits of a target (TypeError for a plugin of another group)."""
        traits: TargetTraits = self._traits(TargetTraits)
        return traits

    @property
    def pack_traits(self) -> PackTraits:
        """The traits of a pack (TypeError for a plugin of another group)."""
        traits: PackTraits = self._traits(PackTraits)
        return traits

    @property
    def fitter_traits(self) -> FitterTraits:
        """The traits of a fitter (TypeError for a plugin of another group)."""
        traits: FitterTraits = self._traits(FitterTraits)
        return traits

    @property
    def judge_traits(self) -> JudgeTraits:
        """The traits of a judge (TypeError for a plugin of another group)."""
        traits: JudgeTraits = self._traits(JudgeTraits)
        return traits

    def provenance(self) -> dict[str, Any]:
        """The dict reports store under ``plugins``/``fitter``, secret-looking options redacted."""
        return {
            "group": self.group,
            "name": self.name,
            "provider": self.provider,
            "target": self.target,
            "options": redact(dict(self.options)),
        }


def _check_group(group: str) -> None:
    if group not in GROUPS:
        raise ValueError(f"unknown plugin group {group!r}; expected one of {', '.join(GROUPS)}")


class _MetadataExtensionManager(NamedExtensionManager[Any]):
    """stevedore's named loader, reading entry points from ``importlib.metadata`` on each call.

    stevedore memoises a group's entry points for the life of the process and on disk (keyed by
    ``sys.path``); the listing above reads ``importlib.metadata`` directly. Overriding stevedore's
    public ``list_entry_points`` hook makes both read the same source, so the listing and the
    loader never disagree (a plugin installed while a session runs, a faked distribution in a
    test) and no test has to reach into stevedore's private cache.
    """

    def list_entry_points(self) -> list[importlib.metadata.EntryPoint]:
        return list(importlib.metadata.entry_points(group=self.namespace))


def _import(group: str, offer: _Offer) -> Any:
    """Import one entry point through stevedore, collecting (never swallowing) a failure."""
    errors: list[BaseException] = []

    def on_failure(_mgr: object, _ep: object, err: BaseException) -> None:
        errors.append(err)

    def conflict(_ns: str, _name: str, extensions: list[Any]) -> Any:
        # Two distributions offering one name are refused before we get here; what is left are
        # duplicate views of the same distribution.
        return extensions[0]

    manager = _MetadataExtensionManager(
        group,
        names=[offer.name],
        invoke_on_load=False,
        on_load_failure_callback=on_failure,
        on_missing_entrypoints_callback=lambda _names: None,
        conflict_resolver=conflict,
    )
    if errors:
        err = errors[0]
        raise PluginError(group, failures=[_failure(group, offer, f"{type(err).__name__}: {err}")])
    if offer.name not in manager.names():
        raise PluginError(group, failures=[_failure(group, offer, "entry point did not load")])
    return manager[offer.name].plugin


def _failure(group: str, offer: _Offer, error: str) -> PluginLoadFailure:
    return PluginLoadFailure(group, offer.name, offer.target, offer.provider, error)


@frozen
class StrayEntryPoint:
    """An entry point under a ``ragleaklab...`` group that ragleaklab does not read (a typo of
    one that it does, such as ``ragleaklab.reporter``): installed, and used by nothing.

    Attributes:
        group: The group it is registered under.
        name, target: The entry point's name and ``module:object``.
        distribution, version: Who registers it.
        meant: The group it was most likely meant for, or None.
    """

    group: str
    name: str
    target: str
    distribution: str
    version: str
    meant: str | None

    @property
    def provider(self) -> str:
        return f"{self.distribution} {self.version}"

    def message(self) -> str:
        """``'acme-tap' is registered by acme-x 1.0 under 'ragleaklab.reporter', which is not a
        group: did you mean 'ragleaklab.reporters'?``"""
        hint = (
            f"did you mean {self.meant!r}?"
            if self.meant
            else f"the groups are {', '.join(READ_GROUPS)}"
        )
        return (
            f"{self.name!r} is registered by {self.provider} under {self.group!r}, which is not "
            f"a group: {hint}"
        )


def _is_ours(group: str) -> bool:
    # Any spelling a careless author might use for ragleaklab's groups: ragleaklab.reporter,
    # Ragleaklab.Reporters, ragleaklab_reporters; never inspect_ai's or another tool's.
    return group.lower().replace("_", ".").replace("-", ".").startswith("ragleaklab")


def _meant_group(group: str) -> str | None:
    """The group of :data:`READ_GROUPS` *group* was most likely meant as, compared past the
    shared ``ragleaklab.`` (which would make every group look alike)."""
    tail = group.lower().replace("_", ".").replace("-", ".").removeprefix("ragleaklab").lstrip(".")
    tails = {g.removeprefix("ragleaklab."): g for g in READ_GROUPS}
    close = difflib.get_close_matches(tail, list(tails), n=1, cutoff=0.6)
    return tails[close[0]] if close else None


def stray_entry_points() -> list[StrayEntryPoint]:
    """Every installed entry point under a ``ragleaklab...`` group that is not one of
    :data:`READ_GROUPS`, by group and name; read from metadata, nothing is imported.

    .. versionadded:: 0.3
    """
    found: dict[tuple[str, str, str], StrayEntryPoint] = {}
    for distribution in importlib.metadata.distributions():
        strays = [
            ep
            for ep in distribution.entry_points
            if ep.group not in READ_GROUPS and _is_ours(ep.group)
        ]
        if strays:  # the common case is none: the name is read only for those that have one
            dist, version = distribution.metadata["Name"] or "<unknown>", distribution.version
        for ep in strays:
            meant = _meant_group(ep.group)
            found.setdefault(  # a distribution visible twice on sys.path is one
                (ep.group, ep.name, _normalise(dist)),
                StrayEntryPoint(ep.group, ep.name, ep.value, dist, version, meant),
            )
    return sorted(found.values(), key=lambda s: (s.group, s.name, s.provider))


def stray_notes(name: str) -> list[str]:
    """Why *name*, asked for and not found, may be installed all the same: each entry point of
    that name under a group ragleaklab does not read (:func:`stray_entry_points`)."""
    return [s.message() for s in stray_entry_points() if s.name == name]


def _find(group: str, name: str) -> _Offer:
    offers = [o for o in _offers(group) if o.name == name]
    if not offers:
        known = available_names(group)
        raise PluginError(
            group,
            missing={name: suggestions(name, known)},
            available=known,
            notes=stray_notes(name),
        )
    if len(offers) > 1:
        who = "; ".join(f"{o.provider} ({o.target})" for o in offers)
        raise PluginError(
            group,
            failures=[
                PluginLoadFailure(
                    group,
                    name,
                    " | ".join(o.target for o in offers),
                    " and ".join(o.provider for o in offers),
                    f"the name is offered by {len(offers)} distributions: {who}; "
                    "uninstall one of them",
                )
            ],
        )
    return offers[0]


def check_contract(group: str, name: str, target: str, cls: Any, obj: Any = None) -> None:
    """Raise :class:`PluginContractError` unless *cls* (and *obj*, once built) honour *group*.

    The entry point must be an attrs class or dataclass (its fields are its options) and the
    instance must have every method of the group's protocol; a target may have the asynchronous
    form of ``answer`` and ``ingest`` (``aanswer``, ``aingest``) instead.

    A public attribute that looks like a member the plugin lacks (:func:`misspelt_members`) is
    refused too, naming the member meant: the core would never read it.

    .. versionadded:: 0.1
    .. versionchanged:: 0.2
        Async-only targets pass.
    .. versionchanged:: 0.3
        Misspelt members are refused; a missing method names the one that looks meant for it.
    """
    _check_group(group)
    if not isinstance(cls, type) or not (attrs.has(cls) or dataclasses.is_dataclass(cls)):
        raise PluginContractError(
            group,
            failures=[
                PluginLoadFailure(
                    group,
                    name,
                    target,
                    _provider_of(group, name),
                    f"must point at an attrs class or dataclass, got {cls!r}",
                )
            ],
        )
    # A member spelt so that the core would never read it (``for_corpos``, ``rendr``): an error
    # naming the member meant, never a plugin that silently does less than its author wrote.
    misspelt = misspelt_members(group, cls)
    if misspelt:
        raise PluginContractError(
            group,
            failures=[
                PluginLoadFailure(
                    group, name, target, _provider_of(group, name), m.message(group, name)
                )
                for m in misspelt
            ],
        )
    if obj is not None:
        protocol = PROTOCOLS[group]
        # A target may define a required method in its asynchronous form only (``aanswer``).
        alternatives = ALTERNATIVES.get(group, {})
        lacking = [
            n
            for n in required_members(group)
            if not callable(getattr(obj, n, None))
            and not (n in alternatives and callable(getattr(obj, alternatives[n], None)))
        ]
        if lacking:
            hints = {n: missing_hint(group, cls, n) for n in lacking}
            said = [
                f"{group_kind(group)} {name!r} has no method {n!r}{h}"
                for n, h in hints.items()
                if h
            ]
            unhinted = [n for n, h in hints.items() if not h]
            if unhinted:
                said.insert(0, f"missing {', '.join(unhinted)}")
            raise PluginContractError(
                group,
                failures=[
                    PluginLoadFailure(
                        group,
                        name,
                        target,
                        _provider_of(group, name),
                        f"does not implement {protocol.__name__}: {'; '.join(said)}",
                    )
                ],
            )


def _provider_of(group: str, name: str) -> str:
    offers = [o for o in _offers(group) if o.name == name]
    return " and ".join(o.provider for o in offers) or "<not installed>"


def primary_metric_for(pack_type: str, metrics: Sequence[str] = ()) -> str:
    """The metric value calibrated for a pack of *pack_type* scored by *metrics*.

    Metrics declare it themselves, as ``primary_for``, a mapping from pack type to one of their
    values (``"*"``: any pack type no metric names). The pack's own metrics are asked first, in
    order, then every installed one by name; an exact pack type wins over ``"*"``. The built-ins
    keep the seed's mapping: ``retrieval`` -> ``poison_rate_at_k``, ``sentinel`` ->
    ``leak_rate``, ``claim`` -> ``poison_claim_rate``, any other -> ``verbatim_score``.

    Raises:
        ConfigError: No installed metric declares a value for *pack_type*.

    .. versionchanged:: 0.2
        Read from the metrics' declarations, not from a table in the core.
    """
    names = [*dict.fromkeys(metrics)]
    names += [n for n in available_names(METRICS) if n not in names]
    declared: list[Mapping[str, str]] = []
    # Metrics are imported one at a time and the first exact declaration ends the search: a
    # pack's own metric usually names its type, and importing every installed metric (their
    # lexicons, a Markdown parser) only to read one table costs a run memory it never uses.
    for name in names:
        try:
            cls = plugin_class(METRICS, name)
        except RagleaklabError:
            continue  # a broken metric is reported where it is used
        table = metric_traits(cls).primary_for
        if _declared(table, pack_type):
            return table[pack_type]
        declared.append(table)
    for table in declared:
        if _declared(table, "*"):
            return table["*"]
    raise ConfigError(
        f"pack type {pack_type!r}",
        [
            f"no installed metric declares the value to calibrate for pack type {pack_type!r}: "
            "set primary_metric in the pack @ $.primary_metric"
        ],
    )


def _declared(table: Mapping[str, str], key: str) -> bool:
    value = table.get(key)
    return isinstance(value, str) and bool(value)


def metric_values(metric: Any) -> tuple[str, ...]:
    """The value names a metric declares (its ``values``), in its order; () when it declares none.

    *metric* is an installed metric's name (its class is imported, not built), a metric class,
    an instance or a :class:`LoadedPlugin`. A metric that declares nothing is not wrong: its
    value names are then known only from the results it returns.

    Raises:
        PluginError, PluginContractError: *metric* is a name that cannot be loaded.

    .. versionadded:: 0.2
    """
    if isinstance(metric, str):
        metric = plugin_class(METRICS, metric)
    elif isinstance(metric, LoadedPlugin):
        return metric.metric_traits.values
    return metric_traits(metric).values


def pack_info(pack: Any) -> PackInfo:
    """*pack*'s ``info()``, its primary metric filled in from its metrics' declarations when it
    gives none (:func:`primary_metric_for`); what every part of ragleaklab reads a pack by."""
    info = pack.info()
    if isinstance(info, PackInfo) and not info.primary_metric:
        info = attrs.evolve(info, primary_metric=primary_metric_for(info.pack_type, info.metrics))
    return info


def plugin_class(group: str, name: str) -> Any:
    """The class (or factory) the entry point *name* of *group* names, imported and checked
    against the group's protocol, not built: for what a plugin declares about itself (say, a
    metric's ``check_ground_truth``).

    Raises:
        PluginError, PluginContractError: as :func:`load_plugin`.
    """
    return _checked_class(group, name)[1]


def _checked_class(group: str, name: str) -> tuple[_Offer, Any]:
    """The entry point *name* of *group* and its imported class, checked against the protocol."""
    _check_group(group)
    offer = _find(group, name)
    cls = _import(group, offer)
    check_contract(group, name, offer.target, cls)
    return offer, cls


def load_plugin(
    group: str,
    name: str,
    options: Mapping[str, Any] | None = None,
    *,
    path: str = "$.options",
) -> LoadedPlugin:
    """Load the plugin *name* of *group* and build it from *options*.

    Only this one entry point is imported. Options are structured into the plugin's own attrs
    class by the strict converter, so their errors carry ``path``.

    Raises:
        PluginError: Unknown name (with did-you-mean), import failure, ambiguous name.
        PluginContractError: The entry point is not an attrs class/dataclass or lacks a method.
        ConfigError: The options do not fit the plugin's fields.

    .. versionadded:: 0.1
    .. versionchanged:: 0.3
        A public attribute that looks like a member the plugin lacks is refused
        (:class:`PluginContractError`, naming the member meant); it was a logged warning.
    """
    offer, cls = _checked_class(group, name)
    if group == TARGETS:
        # A credential written literally in a target's options (a python app's DSN) is sent to
        # the system, which may echo it: hidden from every answer, log and message from now on,
        # an error building the target included.
        register_secrets(literal_secrets(options or {}))
    try:
        obj = structure(dict(options or {}), cls, source=f"{path} ({group}:{name})", path=path)
    except ConfigError:
        raise
    except Exception as exc:  # a plugin's own __init__/__attrs_post_init__ blew up
        raise PluginError(
            group, failures=[_failure(group, offer, f"{type(exc).__name__}: {exc}")]
        ) from exc
    check_contract(group, name, offer.target, cls, obj)
    log.debug("plugin.loaded", group=group, plugin=name, provider=offer.provider)
    return LoadedPlugin(group, name, offer.target, offer.provider, obj, plugin_options(obj))


@frozen
class PluginInfo:
    """One installed entry point, as ``ragleaklab plugins`` shows it."""

    group: str
    name: str
    target: str
    distribution: str
    version: str
    status: str  # "ok" or "failed"
    error: str | None = None
    #: Attributes that look like members the plugin lacks, each with the members it is close to
    #: (the plugin fails to load for them: its ``error`` says so, with the fix).
    misspelt: tuple[Misspelling, ...] = ()
    #: What works but not as the author may think (a reporter's shorthand that cannot be a
    #: flag), one sentence each.
    warnings: tuple[str, ...] = ()

    def notes(self) -> list[str]:
        """The warnings, one line each (a failure is in ``error``)."""
        return list(self.warnings)


def discover_plugins(groups: tuple[str, ...] = GROUPS) -> list[PluginInfo]:
    """Every installed plugin of every group, and whether it loads and builds with defaults.

    This is the one call that imports *all* plugins. Failures are reported in the result,
    never raised; a misspelt member fails its plugin (:attr:`PluginInfo.misspelt` lists them).

    .. versionadded:: 0.1
    .. versionchanged:: 0.2
        ``misspelt``.
    .. versionchanged:: 0.3
        A misspelt member fails the plugin; ``warnings``.
    """
    infos = []
    for group in groups:
        _check_group(group)
        for offer in _offers(group):
            error = None
            misspelt: tuple[Misspelling, ...] = ()
            try:
                # Read from the class, so a plugin that does not build with defaults is checked.
                misspelt = misspelt_members(group, _import(group, offer))
                load_plugin(group, offer.name, None)
            except (PluginError, ConfigError) as exc:
                error = str(exc)
            infos.append(
                PluginInfo(
                    group,
                    offer.name,
                    offer.target,
                    offer.dist,
                    offer.version,
                    "ok" if error is None else "failed",
                    error,
                    misspelt,
                )
            )
    return infos
