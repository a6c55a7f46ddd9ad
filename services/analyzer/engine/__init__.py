"""The review engine: learn a repository's conventions from its facts, check code against them.

Public API (pure; no I/O):

- :func:`learn` -> :class:`ConventionModel`; :func:`encode_model` / :func:`decode_model`
- :func:`check` (one file) and :func:`check_change` (a change as a whole) -> :class:`Finding` list
- :func:`parse_config` for ``.codereview.yml``; :data:`DEFAULT_THRESHOLDS`
- :func:`calibrate` / :func:`apply_calibration` / :func:`conventions_from_reports`
- :func:`to_sarif`
"""

from services.analyzer.engine.calibration import (
    Calibration,
    CalibrationPolicy,
    ExternalReport,
    Feedback,
    RuleCalibration,
    apply_calibration,
    calibrate,
    conventions_from_reports,
    with_conventions,
)
from services.analyzer.engine.checker import check, check_change
from services.analyzer.engine.config import CONFIG_FILE, ConfigError, RepoConfig, parse_config
from services.analyzer.engine.conventions import (
    Convention,
    ConventionModel,
    Scope,
    decode_model,
    encode_model,
    relevel,
)
from services.analyzer.engine.file_check import CheckPrefs
from services.analyzer.engine.findings import Evidence, Finding
from services.analyzer.engine.learn import learn
from services.analyzer.engine.sarif import to_sarif
from services.analyzer.engine.thresholds import DEFAULT_THRESHOLDS, Bar, Threshold, Thresholds

__all__ = [
    "CONFIG_FILE",
    "DEFAULT_THRESHOLDS",
    "Bar",
    "Calibration",
    "CalibrationPolicy",
    "CheckPrefs",
    "ConfigError",
    "Convention",
    "ConventionModel",
    "Evidence",
    "ExternalReport",
    "Feedback",
    "Finding",
    "RepoConfig",
    "RuleCalibration",
    "Scope",
    "Threshold",
    "Thresholds",
    "apply_calibration",
    "calibrate",
    "check",
    "check_change",
    "conventions_from_reports",
    "decode_model",
    "encode_model",
    "learn",
    "parse_config",
    "relevel",
    "to_sarif",
    "with_conventions",
]
