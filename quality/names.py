"""The check names and severity policy (defined once, in the leaf
:mod:`nara_kg.model.check_names`) with each check's Dagster severity, for the checks of this
package."""

from graph_assets.common import severity as severity
from nara_kg.model.check_names import *  # noqa: F403 - re-exported for the checks and tests
