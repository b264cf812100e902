"""``neurips26 build <resource>``: one sub-command per registered resource, made from its build function; and
``neurips26 sample-path <resource>``, the raw folder of a resource's embedded sample.

Every resource gets the common options ``--raw``, ``--out`` and ``--workers``; its own options are the
keyword parameters of its build function after ``progress``, declared there as
``Annotated[T, typer.Option(help=...)]``. (A parameter without a typer annotation still gets an option when
its type is a plain bool, int, float, str or path, with a generic help line.) Sub-commands are made when
asked for, so ``neurips26 --help`` imports no builder.
"""

from __future__ import annotations

import inspect
import types
import typing
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

import typer
import typer.core
from rich.markup import escape
from typer._click import Command, Context  # typer vendors click: its classes and exceptions live here
from typer._click.exceptions import NoSuchOption

from neurips26.corpora import RESOURCES
from neurips26.errors import UserError
from neurips26.options import check_target_folder
from neurips26.output import console, progress

COMMON = ("raw", "out", "workers", "progress")
PLAIN = (bool, int, float, str, Path)
SHOWN_PROBLEMS = 10  # a build's problem lines printed; the rest are counted


def run_build(resource: str, build: Callable[..., Any], raw: Path | None, out: Path | None, workers: int,
              options: dict[str, Any]) -> None:
    """Build ``resource`` with a progress bar on stderr; print the report's summary line."""
    if raw is not None and not Path(raw).is_dir():
        raise UserError(f"{raw}: raw folder not found")
    out = out or Path(resource)
    check_target_folder(out, "--out")
    with progress(lines=True) as bars:  # off a terminal: a line per tenth of the work, so long builds are visible
        report = build(raw=raw, out=out, workers=workers, progress=bars.track(f"building {resource}"), **options)
    console.print(f"[green]built[/green] {escape(str(out))}: {escape(report.summary())}", highlight=False)
    problems: list[str] = report.problems  # the neurips26.buildreport.BuildReport contract
    for line in problems[:SHOWN_PROBLEMS]:
        console.print(f"[yellow]problem[/yellow] {escape(line)}", highlight=False)
    if len(problems) > SHOWN_PROBLEMS:
        console.print(f"[yellow]problem[/yellow] (+{len(problems) - SHOWN_PROBLEMS} more)", highlight=False)
    if problems:
        console.print(escape(f"see the errors config: neurips26 query \"SELECT * FROM {out.name}.errors\" "
                             f"--data {out.parent}"), highlight=False)


def _plain(hint: Any) -> type | None:
    """The plain type of ``hint`` (``T`` or ``T | None``) when it is one of :data:`PLAIN`, else None."""
    args = [hint]
    if typing.get_origin(hint) in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(hint) if a is not type(None)]
    return args[0] if len(args) == 1 and args[0] in PLAIN else None


def own_options(resource: str, build: Callable[..., Any]) -> list[inspect.Parameter]:
    """The resource's own options: typer-annotated keyword parameters, and plain ones as a fallback."""
    hints = typing.get_type_hints(build, include_extras=True)
    params = []
    for param in inspect.signature(build).parameters.values():
        if param.name in COMMON or param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            continue
        hint = hints.get(param.name, str)
        if typing.get_origin(hint) is Annotated and any(isinstance(m, typer.models.OptionInfo)
                                                         for m in typing.get_args(hint)[1:]):
            annotation = hint
        elif _plain(hint) is not None:
            flag = "--" + param.name.replace("_", "-")
            annotation = Annotated[hint, typer.Option(flag, help=f"{resource}: {param.name.replace('_', ' ')} "
                                                             "(see the builder's documentation).")]
        else:
            continue  # not expressible as an option: the builder's default is used
        params.append(inspect.Parameter(param.name, inspect.Parameter.KEYWORD_ONLY, annotation=annotation,
                                        default=None if param.default is param.empty else param.default))
    return params


def sample_dir(build: Callable[..., Any]) -> Path | None:
    """The embedded sample's raw folder of a builder (its module's ``SAMPLE_DIR``), or None when it has none."""
    folder = getattr(inspect.getmodule(build), "SAMPLE_DIR", None)
    return Path(folder) if folder is not None else None


def raw_help(resource: str, build: Callable[..., Any]) -> str:
    """The ``--raw`` help line: where the default input is."""
    sample = sample_dir(build)
    if sample is None:
        return "Raw input folder (default: the builder's default release; see README)."
    return (f"Raw input folder (default: the embedded sample, {escape(str(sample))}: a model of what a raw folder "
            f"holds; `neurips26 sample-path {resource}` prints it).")


def sample_path(resource: Annotated[str, typer.Argument(help="A resource with an embedded sample.")]) -> None:
    """Print the raw folder of a resource's embedded sample (what `build <resource>` reads without --raw)."""
    sample = sample_dir(RESOURCES.get(resource))
    if sample is None:
        with_sample = [name for name in RESOURCES.names() if sample_dir(RESOURCES.get(name)) is not None]
        raise UserError(f"{resource} has no embedded sample; resources with one: {', '.join(with_sample)}")
    print(sample)


def option_names(command: Command) -> set[str]:
    return {opt for p in command.params for opt in getattr(p, "opts", [])}


class ResourceCommand(typer.core.TyperCommand):
    """A resource's build command; an option that belongs to another resource is named as such."""

    def parse_args(self, ctx: Context, args: list[str]) -> list[str]:
        try:
            return super().parse_args(ctx, args)
        except NoSuchOption as exc:
            owners = [name for name in RESOURCES.names()
                      if name != self.name and exc.option_name in option_names(resource_command(name))]
            if owners:
                raise UserError(f"{exc.option_name} applies to {', '.join(owners)}, not {self.name}") from None
            raise


def resource_command(resource: str) -> Command:
    """The click command ``neurips26 build <resource>``."""
    build = RESOURCES.get(resource)
    own = own_options(resource, build)
    common = [
        inspect.Parameter("raw", inspect.Parameter.KEYWORD_ONLY, default=None, annotation=Annotated[
            Path | None, typer.Option(help=raw_help(resource, build))]),
        inspect.Parameter("out", inspect.Parameter.KEYWORD_ONLY, default=None, annotation=Annotated[
            Path | None, typer.Option(help=f"Output folder (default: ./{resource}).")]),
        inspect.Parameter("workers", inspect.Parameter.KEYWORD_ONLY, default=1, annotation=Annotated[
            int, typer.Option(min=1, help="Parallel parser processes.")]),
    ]

    def command(raw: Path | None, out: Path | None, workers: int, **options: Any) -> None:
        run_build(resource, build, raw, out, workers, options)

    command.__signature__ = inspect.Signature(common + own)  # type: ignore[attr-defined]
    command.__annotations__ = {}
    doc = inspect.getdoc(build) or f"Build {resource}."
    one = typer.Typer(add_completion=False)
    one.command(resource, cls=ResourceCommand, help=doc.split("\n\n")[0])(command)
    return typer.main.get_command(one)


class BuildGroup(typer.core.TyperGroup):
    """``neurips26 build``: its sub-commands are the registered resources, made on demand."""

    def list_commands(self, ctx: Context) -> list[str]:
        return RESOURCES.names()

    def get_command(self, ctx: Context, cmd_name: str) -> Command | None:
        RESOURCES.get(cmd_name)  # UnknownNameError lists the known resources
        return resource_command(cmd_name)


build_app = typer.Typer(cls=BuildGroup, no_args_is_help=True, add_completion=False,
                        help="Build a resource into a Hub-ready dataset folder (Parquet shards + card + Croissant). "
                             "`neurips26 build <resource> --help` lists its options.")
