"""`./test.sh dataset`: what compose's `dataset` service runs, the same rows as the harness."""

import argparse
import os
from dataclasses import dataclass

from rich.console import Console

from loadtest.lab.errors import LabError
from loadtest.load.scenarios import READ_PER_PAGE
from loadtest.modes.options import add_dataset_size

SUMMARY = (
    "empty the posts table of the database in DATABASE_URL and load the dataset, then exit "
    "(seconds)"
)


@dataclass(frozen=True)
class DatasetSettings:
    dataset_size: int = 10_000


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.description = (
        "Empty the posts table of the database in DATABASE_URL (creating the schema if needed) "
        "and load the deterministic dataset the benchmark uses, the posts' comments and tags "
        "included. Takes seconds."
    )
    add_dataset_size(parser, READ_PER_PAGE, DatasetSettings.dataset_size)


def settings_from(arguments: argparse.Namespace) -> DatasetSettings:
    return DatasetSettings(arguments.dataset_size)


def run(settings: DatasetSettings, console: Console) -> None:
    import psycopg

    from commons.config import ConfigurationError, libpq_url, parse_database_url
    from loadtest.lab.database import prepare_schema
    from loadtest.lab.dataset import load_dataset

    raw_url = os.environ.get("DATABASE_URL", "").strip()
    if not raw_url:
        raise LabError("the dataset mode loads into DATABASE_URL, which is not set")
    try:
        database_url = libpq_url(parse_database_url(raw_url))
    except ConfigurationError as error:
        raise LabError(str(error)) from None
    prepare_schema(database_url)
    try:
        load_dataset(database_url, settings.dataset_size, related_rows=True)
    except psycopg.Error as error:
        raise LabError(f"loading the dataset failed: {error}".splitlines()[0]) from None
    console.print(f"Loaded {settings.dataset_size:,} posts, with their comments and tags.")
