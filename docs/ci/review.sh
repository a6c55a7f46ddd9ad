#!/bin/sh
# Generic CI job: review this branch against its base, keep a SARIF report, fail on findings.
#   CODEREVIEW_URL, CODEREVIEW_TOKEN   the service and a token (a CI secret)
#   CODEREVIEW_REPO                    repository id or owner/repo (default: this work tree's registration)
#   CODEREVIEW_BASE                    base branch or commit (default origin/main; it must be fetched)
#   CODEREVIEW_FAIL_ON                 error (default), warning, info or none
#   CODEREVIEW_SARIF                   report path (default codereview.sarif)
# Exit status: 0 clean, 1 findings reached CODEREVIEW_FAIL_ON, 3 the service failed the review.
set -eu
codereview review \
  --base "${CODEREVIEW_BASE:-origin/main}" \
  --format sarif --output "${CODEREVIEW_SARIF:-codereview.sarif}" \
  --fail-on "${CODEREVIEW_FAIL_ON:-error}"
