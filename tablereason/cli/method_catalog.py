"""What each registered method takes: tasks, profiles and options, read from the code.

Nothing here is a hand-written list. A method is described by building it, offline,
with a scripted model that is never asked anything:

- **tasks**: the dataset names (and the names its ``task`` parameter's type lists)
  it builds for; a task whose default tools read dataset files counts, and is marked;
- **profiles**: the choices of its settings model's ``profile`` field;
- **options**: the fields of its settings model (when it takes them as keyword
  overrides) and the keyword parameters of its constructor that a JSON value can
  fill, each with its type, its default and how the other profiles differ.

:func:`check_options` holds ``--option KEY=VALUE`` against the same description, so an
unknown key names the valid ones and a bad value is refused in a sentence.

Example:
    >>> info = describe("chain_of_table")
    >>> info.tasks, info.profiles
    (['tabfact', 'wikitq'], ['paper', 'efficient'])
    >>> next(o for o in info.options if o.name == "select_samples").default
    1
"""

from __future__ import annotations

import inspect
import re
import tempfile
import types
import typing
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, TypeAdapter, ValidationError
from pydantic.fields import FieldInfo

from tablereason.datasets import DATASETS
from tablereason.errors import ConfigurationError, DatasetError, UnknownNameError
from tablereason.llm.backends.scripted import ScriptedLLM
from tablereason.methods.base import Method, MethodSpec
from tablereason.methods.catalog import METHODS

CONTEXT_PARAMETERS = frozenset({"self", "llm", "task", "data_dir", "profile"})
"""Constructor parameters that are not options: the run gives them."""


@dataclass
class Option:
    """One option of a method.

    Attributes:
        name: The key of ``--option KEY=VALUE``.
        annotation: Its type, as declared.
        default: Its value in the default profile (for the first task).
        differences: How other profiles or tasks set it, e.g. ``{"paper": 8}``.
        description: The first sentence its docstring gives it, if any.
        settings_field: The settings field, with the limits a value must keep (``ge=1``).
    """

    name: str
    annotation: Any
    default: Any
    differences: dict[str, Any] = field(default_factory=dict)
    description: str = ""
    settings_field: FieldInfo | None = None

    def validator(self) -> TypeAdapter[Any]:
        """Checks a value: its type and, for a settings field, its limits."""
        if self.settings_field is not None:
            annotated: Any = typing.Annotated
            return TypeAdapter(annotated[self.annotation, self.settings_field])
        return TypeAdapter(self.annotation)

    @property
    def type_text(self) -> str:
        """The type in words (``"int"``, ``"int or null"``, ``"one of 'a', 'b'"``)."""
        return type_text(self.annotation)


@dataclass
class MethodInfo:
    """What a registered method takes (see the module notes)."""

    name: str
    summary: str
    takes_task: bool
    tasks: list[str]
    tasks_needing_data: list[str]
    profiles: list[str]
    default_profile: str | None
    options: list[Option]
    settings_model: type[BaseModel] | None = None

    def option(self, name: str) -> Option | None:
        """The option called ``name``, if the method has one."""
        return next((o for o in self.options if o.name == name), None)


def type_text(annotation: Any) -> str:
    """A type annotation in the words ``tablereason methods`` shows.

    Example:
        >>> type_text(int | None), type_text(typing.Literal["a", "b"]), type_text(list[str])
        ('int or null', "one of 'a', 'b'", 'list of text')
    """
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if annotation is type(None):
        return "null"
    if origin is typing.Literal:
        return "one of " + ", ".join(repr(a) for a in args)
    if origin in (typing.Union, types.UnionType):
        return " or ".join(type_text(a) for a in args)
    if origin in (list, tuple, Sequence, typing.Sequence):
        return f"list of {type_text(args[0])}" if args else "list"
    if isinstance(annotation, type):
        if issubclass(annotation, BaseModel) or hasattr(annotation, "__dataclass_fields__"):
            return "object"
        return {"str": "text"}.get(annotation.__name__, annotation.__name__)
    return str(annotation)


def _fillable(annotation: Any) -> bool:
    """Whether a JSON value can fill a parameter of this type (not a tool or a sandbox)."""
    if annotation in (str, int, float, bool, type(None)):
        return True
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin is typing.Literal:
        return True
    if origin in (typing.Union, types.UnionType, list, tuple, Sequence):
        return bool(args) and all(_fillable(a) for a in args if a is not Ellipsis)
    return False


_ENTRY = re.compile(r"^    (\w+)(?: \([^)]*\))?: (.*)$")


def _descriptions(*owners: Any) -> dict[str, str]:
    """First sentences of the ``name: text`` entries (Args, Attributes) of docstrings."""
    found: dict[str, str] = {}
    for owner in owners:
        lines = (inspect.getdoc(owner) or "").splitlines()
        for number, line in enumerate(lines):
            match = _ENTRY.match(line)
            if not match or match.group(1) in found:
                continue
            text = match.group(2)
            for more in lines[number + 1 :]:  # continuation lines are indented deeper
                if not more.startswith("        "):
                    break
                text += " " + more.strip()
            found[match.group(1)] = re.split(r"(?<!\.)\.(?:\s|$)", text.strip())[0]
    return found


def _parameters(spec: MethodSpec) -> tuple[dict[str, inspect.Parameter], dict[str, Any], bool]:
    """The factory's parameters, their resolved types, and whether it takes ``**kwargs``."""
    factory = spec.factory
    target = factory.__init__ if inspect.isclass(factory) else factory  # type: ignore[misc]
    params = dict(inspect.signature(target).parameters)
    try:
        hints = typing.get_type_hints(target)
    except Exception:  # some annotation names a type imported only for type checking
        hints = {key: _resolve(target, p) for key, p in params.items()}
    kwargs = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())
    return params, hints, kwargs


def _resolve(target: Any, param: inspect.Parameter) -> Any:
    """One parameter's type; ``Any`` when it cannot be resolved (or the default's type)."""
    annotation = param.annotation
    if isinstance(annotation, str):
        namespace = dict(vars(inspect.getmodule(target) or typing))
        try:
            annotation = eval(annotation, namespace)  # a type annotation of our own code
        except Exception:
            annotation = param.empty
    if annotation is param.empty:
        default = param.default
        return type(default) if isinstance(default, (str, int, float, bool)) else Any
    return annotation


def _task_candidates(hints: Mapping[str, Any]) -> list[str]:
    names = list(DATASETS.names())
    task_type = hints.get("task")
    if typing.get_origin(task_type) is typing.Literal:
        names += [str(a) for a in typing.get_args(task_type) if str(a) not in names]
    return names


def _build(spec: MethodSpec, name: str, task: str | None, data_dir: str, **options: Any) -> Method:
    return spec.build(
        ScriptedLLM(replies=[]), task=task, data_dir=data_dir, registered_as=name, **options
    )


def _dump(value: Any) -> Any:
    try:
        return TypeAdapter(type(value)).dump_python(value, mode="json")
    except Exception:  # not a pydantic-known type: shown as it is
        return value


def describe(name: str) -> MethodInfo:
    """Describe the registered method ``name`` (see the module notes).

    Raises:
        UnknownNameError: For an unknown method (naming the closest).
    """
    spec = METHODS.get(name)
    params, hints, kwargs = _parameters(spec)
    built: dict[str | None, Method] = {}
    tasks: list[str] = []
    needing_data: list[str] = []
    with tempfile.TemporaryDirectory() as empty:
        for task in _task_candidates(hints) if spec.takes_task else [None]:
            try:
                built[task] = _build(spec, name, task, empty)
            except DatasetError:
                needing_data.append(str(task))
            except (ConfigurationError, UnknownNameError):
                continue
            if task is not None:
                tasks.append(task)
        first = next(iter(built.values()), None)
        settings = getattr(first, "settings", None)
        model = type(settings) if isinstance(settings, BaseModel) else None
        profiles: list[str] = []
        if model is not None and "profile" in model.model_fields:
            choices = typing.get_args(model.model_fields["profile"].annotation)
            profiles = [str(c) for c in choices]
        default = params["profile"].default if "profile" in params else None
        default_profile = str(default) if isinstance(default, str) else None
        variants = _variants(spec, name, built, profiles, default_profile, empty)
    options = _options(params, hints, kwargs, model, first, variants, default_profile)
    doc = (inspect.getdoc(spec.factory) or "").split("\n\n")[0].replace("\n", " ")
    return MethodInfo(
        name=name,
        summary=doc,
        takes_task=spec.takes_task,
        tasks=tasks,
        tasks_needing_data=needing_data,
        profiles=profiles,
        default_profile=default_profile,
        options=options,
        settings_model=model,
    )


def _variants(
    spec: MethodSpec,
    name: str,
    built: Mapping[str | None, Method],
    profiles: Sequence[str],
    default_profile: str | None,
    data_dir: str,
) -> dict[str, dict[str, Any]]:
    """Each (profile, task) build's settings, as JSON, labelled ``profile`` or ``profile, task``."""
    out: dict[str, dict[str, Any]] = {}
    ordered: list[str | None] = sorted(profiles, key=lambda p: p != default_profile)
    for profile in ordered or [None]:  # the default profile first
        by_task: dict[str, dict[str, Any]] = {}
        for task, method in built.items():
            if profile is not None and profile != default_profile:
                try:
                    method = _build(spec, name, task, data_dir, profile=profile)
                except Exception:  # a profile that does not build for a task is skipped
                    continue
            settings = getattr(method, "settings", None)
            if isinstance(settings, BaseModel):
                by_task[str(task)] = settings.model_dump(mode="json")
        label = profile or "default"
        values = list(by_task.values())
        if values and all(v == values[0] for v in values):  # the same for every task
            out[label] = values[0]
        else:
            out.update({f"{label}, {task}": v for task, v in by_task.items()})
    return out


def _options(
    params: Mapping[str, inspect.Parameter],
    hints: Mapping[str, Any],
    kwargs: bool,
    model: type[BaseModel] | None,
    first: Method | None,
    variants: Mapping[str, Mapping[str, Any]],
    default_profile: str | None,
) -> list[Option]:
    owners: list[Any] = [model] if model is not None else []
    if first is not None:
        owners.append(type(first))
    texts = _descriptions(*owners)
    options: list[Option] = []
    for key, param in params.items():
        if key in CONTEXT_PARAMETERS or param.kind in (param.VAR_KEYWORD, param.VAR_POSITIONAL):
            continue
        annotation = hints.get(key, Any)
        if not _fillable(annotation):
            continue
        default = None if param.default is param.empty else param.default
        options.append(Option(key, annotation, default, description=texts.get(key, "")))
    if kwargs and model is not None and isinstance(getattr(first, "settings", None), BaseModel):
        labels = list(variants)
        base = variants[labels[0]] if labels else {}
        for key, info in model.model_fields.items():
            if key == "profile" or any(o.name == key for o in options):
                continue
            differences = _collapse(
                {
                    label: values[key]
                    for label, values in variants.items()
                    if label != labels[0] and values.get(key) != base.get(key)
                },
                variants,
            )
            options.append(
                Option(
                    key,
                    info.annotation,
                    _dump(getattr(first.settings, key)),  # type: ignore[union-attr]
                    differences,
                    texts.get(key, ""),
                    info,
                )
            )
    return options


def _collapse(differences: dict[str, Any], variants: Mapping[str, Any]) -> dict[str, Any]:
    """``{"paper, a": x, "paper, b": x}`` as ``{"paper": x}`` when every task of a profile agrees.

    Example:
        >>> _collapse({"paper, a": 1, "paper, b": 1}, {"default": 0, "paper, a": 0, "paper, b": 0})
        {'paper': 1}
    """
    out: dict[str, Any] = {}
    for label, value in differences.items():
        profile = label.split(", ")[0]
        same = [k for k in variants if k.split(", ")[0] == profile]
        if len(same) > 1 and all(differences.get(k, object()) == value for k in same):
            out[profile] = value
        else:
            out[label] = value
    return out


def valid_keys(info: MethodInfo) -> list[str]:
    """The keys ``--option`` takes for a method (``profile`` has its own flag too).

    Example:
        >>> valid_keys(describe("text_to_sql"))
        ['patience', 'max_rows', 'max_tokens', 'constrain', 'temperature', 'top_p', 'seed']
    """
    return [o.name for o in info.options] + (["profile"] if info.profiles else [])


def check_options(name: str, options: Mapping[str, Any]) -> None:
    """Refuse options the method does not take, or values of the wrong kind, in a sentence.

    Raises:
        UnknownNameError: For an unknown method.
        ConfigurationError: Naming the bad key (with the valid ones) or the bad value.

    Example:
        >>> try:
        ...     check_options("text_to_sql", {"patiense": 2})
        ... except ConfigurationError as error:
        ...     print(str(error).split("; ")[1].split(" (defaults")[0])
        its options: patience, max_rows, max_tokens, constrain, temperature, top_p, seed
    """
    import difflib

    info = describe(name)
    keys = valid_keys(info)
    for key, value in options.items():
        if key == "profile":
            if info.profiles and value not in info.profiles:
                raise ConfigurationError(
                    f"{name} has no profile {value!r}; its profiles: {', '.join(info.profiles)}"
                )
            continue
        option = info.option(key)
        if option is None:
            close = difflib.get_close_matches(key, keys, n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            listed = ", ".join(keys) if keys else "none"
            raise ConfigurationError(
                f"{name} has no option {key!r}{hint}; its options: {listed} "
                f"(defaults: tablereason methods {name})"
            )
        _check_value(name, option, value)


def _check_value(name: str, option: Option, value: Any) -> None:
    try:
        option.validator().validate_python(value)
    except ValidationError as error:
        problem = error.errors()[0]
        raise ConfigurationError(
            f"{name} option {option.name}={value!r} is not valid: {problem['msg']} "
            f"(expected {option.type_text}; default {option.default!r})"
        ) from None
    except Exception:  # an annotation pydantic cannot check: the method checks it
        return
