"""Library logging goes through the standard library and configures nothing."""

from __future__ import annotations

import json
import logging
import subprocess
import sys

from ragleaklab_core._log import get_logger


def test_events_reach_stdlib_logging_as_key_value_messages(caplog):
    log = get_logger("ragleaklab_core.test")
    with caplog.at_level(logging.INFO, logger="ragleaklab_core.test"):
        log.info("metric.scored", case_id="c1", name="reserved-in-logrecord", value=1.0)
    [record] = caplog.records
    assert record.name == "ragleaklab_core.test"
    assert record.getMessage() == "metric.scored case_id=c1 name=reserved-in-logrecord value=1.0"


def test_importing_the_library_configures_no_logging():
    code = (
        "import logging, ragleaklab_core, ragleaklab_core.calibration.report;"
        "print(len(logging.getLogger().handlers),"
        " len(logging.getLogger('ragleaklab_core').handlers))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["0", "0"]


def test_unconfigured_info_is_silent_and_stdout_stays_clean():
    code = (
        "from ragleaklab_core._log import get_logger;"
        "log = get_logger('ragleaklab_core.x');"
        "log.info('quiet.event', a=1); log.warning('loud.event', b=2)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout == ""
    assert "quiet.event" not in out.stderr
    assert "loud.event b=2" in out.stderr


def test_cli_json_logging_goes_to_stderr_as_json(tmp_path):
    code = (
        "from ragleaklab_core._log import configure_cli_logging, get_logger;"
        "configure_cli_logging(1, json=True);"
        "get_logger('ragleaklab_core.x').info('calibration.fitted', threshold=0.5)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout == ""
    event = json.loads(out.stderr.strip().splitlines()[-1])
    assert event["event"] == "calibration.fitted"
    assert event["threshold"] == 0.5
    assert event["level"] == "info"


def test_cli_logs_never_show_registered_secrets_or_url_credentials():
    code = (
        "import logging;"
        "from ragleaklab_core._log import configure_cli_logging, get_logger;"
        "from ragleaklab_core._redact import register_secret;"
        "register_secret('s3cr3t-from-env');"
        "configure_cli_logging(2, json={json});"
        "logging.getLogger('httpx').info('HTTP Request: %s %s', 'POST',"
        " 'http://h:1/q?api_key=literal-key&q=1');"
        "get_logger('ragleaklab_core.x').warning('case.errored', reason='Bearer s3cr3t-from-env',"
        " url='https://u:pw-literal@h/x');"
        "logging.getLogger('other').error('token %s', 's3cr3t-from-env')"
    )
    for as_json in (False, True):
        out = subprocess.run(
            [sys.executable, "-c", code.replace("{json}", str(as_json))],
            capture_output=True,
            text=True,
            check=True,
        )
        for secret in ("s3cr3t-from-env", "literal-key", "pw-literal"):
            assert secret not in out.stderr
        assert "api_key=***" in out.stderr and "q=1" in out.stderr
        assert "Bearer ***" in out.stderr and "token ***" in out.stderr
        assert "https://u:***@h/x" in out.stderr
