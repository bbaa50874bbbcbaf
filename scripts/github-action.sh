#!/usr/bin/env bash
# The steps of ragleaklab's GitHub Action (action.yml at the repository root):
#
#   github-action.sh install   pip-installs ragleaklab and the extra packages
#   github-action.sh run       runs `ragleaklab run` and writes the step's outputs
#   github-action.sh gate      exits with the exit code `run` recorded
#
# Every input arrives in an environment variable (INPUT_*), never spliced into shell code by
# the workflow, so a value holding quotes, `$(...)` or newlines is data, not a command. Lists are
# split into an array and every argument is passed quoted: nothing is word-split twice, globbed
# or evaluated. `run` exits with ragleaklab's own exit code (0 pass, 1 fail, 2 bad input,
# 3 not tested); the action lets its step go on (continue-on-error) so the reports are uploaded,
# and `gate` fails the job with that code at the end.
set -euo pipefail

usage() {
    echo "usage: $0 install|run|gate" >&2
    exit 2
}

# $1 as the data of a workflow command: one line, whatever it holds.
escape() {
    local data=${1//%/%25}
    data=${data//$'\r'/%0D}
    printf '%s' "${data//$'\n'/%0A}"
}

# Fail the way ragleaklab fails on bad input: an annotation naming the input, exit code 2 (also
# recorded as the step's exit-code, for the gate at the end of the action).
bad_input() {
    echo "::error title=ragleaklab action::$(escape "$1")"
    if [[ -n ${GITHUB_OUTPUT:-} ]]; then echo "exit-code=2" >>"$GITHUB_OUTPUT"; fi
    exit 2
}

# The words of $1 in the array ITEMS: split on spaces, tabs and newlines, with no quotes, globs
# or expansions. (No namerefs or associative arrays: macOS runners may have bash 3.2, where an
# empty array also needs the ${a[@]+"${a[@]}"} form under `set -u`.)
split_words() {
    ITEMS=()
    local line
    local -a words
    while IFS= read -r line; do
        read -r -a words <<<"$line" || true
        ITEMS+=(${words[@]+"${words[@]}"})
    done <<<"$1"
}

# The lines of $1 in the array ITEMS, trimmed, without blank lines and # comments.
split_lines() {
    ITEMS=()
    local line
    while IFS= read -r line; do
        line=${line%$'\r'}
        line=${line#"${line%%[![:space:]]*}"}
        line=${line%"${line##*[![:space:]]}"}
        if [[ -n $line && $line != \#* ]]; then ITEMS+=("$line"); fi
    done <<<"$1"
}

# The inode of file $1, or nothing when there is none: ragleaklab writes every file atomically
# (a new file renamed over the old), so a file this run wrote has another inode than the one
# an earlier run left in the same place, however fine the clock is.
inode() {
    local number=""
    if [[ -e $1 ]]; then read -r number _ < <(ls -di -- "$1"); fi
    printf '%s' "$number"
}

# "true" or "false" (what a boolean input is); "" is "false".
is_true() {
    case ${2:-} in
        true) return 0 ;;
        false | "") return 1 ;;
        *) bad_input "input '$1' must be true or false, not '$2'" ;;
    esac
}

# One line of GITHUB_OUTPUT (a path holding a newline would forge another output: refused).
output() {
    [[ $2 == *$'\n'* ]] && bad_input "output '$1' would hold a newline: '$2'"
    if [[ -n ${GITHUB_OUTPUT:-} ]]; then
        printf '%s=%s\n' "$1" "$2" >>"$GITHUB_OUTPUT"
    fi
    printf 'output %s=%s\n' "$1" "$2"
}

# report.json's verdict: pass, fail or error.
read_verdict() {
    python -c 'import json, sys; print(json.load(open(sys.argv[1], encoding="utf-8"))["verdict"])' "$1"
}

install() {
    local action_path=${GITHUB_ACTION_PATH:?GITHUB_ACTION_PATH is set by the runner}
    local spec=${INPUT_RAGLEAKLAB_VERSION:-}
    if [[ -z $spec ]]; then
        spec=$action_path # the action's own checkout: the tool of the tag the workflow uses
    elif [[ $spec =~ ^[0-9][0-9A-Za-z.+!-]*$ ]]; then
        spec="ragleaklab==$spec" # a bare version
    fi
    split_words "${INPUT_PACKAGES:-}"
    # Not echoed here: a requirement may carry a token (git+https://TOKEN@..., an index URL);
    # pip's own log names what it installs with the credentials of URLs masked.
    python -m pip install --disable-pip-version-check "$spec" ${ITEMS[@]+"${ITEMS[@]}"}
    ragleaklab --version
}

run() {
    local workdir=${INPUT_WORKING_DIRECTORY:-.}
    local out=${INPUT_OUT:-ragleaklab-out}
    [[ $workdir == *$'\n'* ]] && bad_input "input 'working-directory' holds a newline"
    [[ $out == *$'\n'* ]] && bad_input "input 'out' holds a newline"
    cd -- "$workdir" || bad_input "input 'working-directory': no directory '$workdir'"

    local -a args=(run --out "$out")
    local item
    if [[ -n ${INPUT_CONFIG:-} ]]; then args+=(--config "$INPUT_CONFIG"); fi
    split_words "${INPUT_PACKS:-}"
    for item in ${ITEMS[@]+"${ITEMS[@]}"}; do args+=(--pack "$item"); done
    if [[ -n ${INPUT_TARGET:-} ]]; then args+=(--target "$INPUT_TARGET"); fi
    split_lines "${INPUT_TARGET_OPTIONS:-}"
    for item in ${ITEMS[@]+"${ITEMS[@]}"}; do args+=(--target-option "$item"); done
    if is_true smoke "${INPUT_SMOKE:-}"; then args+=(--smoke); fi
    if [[ -n ${INPUT_THRESHOLDS:-} ]]; then args+=(--thresholds "$INPUT_THRESHOLDS"); fi
    if [[ -n ${INPUT_BASELINE:-} ]]; then args+=(--baseline "$INPUT_BASELINE"); fi
    if [[ -n ${INPUT_FAIL_ON:-} ]]; then args+=(--fail-on "$INPUT_FAIL_ON"); fi
    if [[ -n ${INPUT_BASELINE_LEVEL:-} ]]; then
        args+=(--baseline-level "$INPUT_BASELINE_LEVEL")
    fi
    if is_true force-baseline "${INPUT_FORCE_BASELINE:-}"; then args+=(--force-baseline); fi
    split_words "${INPUT_MAX_FAIL_RATE:-}"
    for item in ${ITEMS[@]+"${ITEMS[@]}"}; do args+=(--max-fail-rate "$item"); done
    split_words "${INPUT_EXTRA_ARGS:-}"
    args+=(${ITEMS[@]+"${ITEMS[@]}"})

    local report=$out/report.json junit=$out/junit.xml sarif=$out/results.sarif
    local html=$out/report.html markdown=$out/summary.md
    args+=(--junit "$junit" --sarif "$sarif" --html "$html" --markdown "$markdown")

    # The command as it runs, each argument quoted; a target option's value may be a secret,
    # so only its key is shown.
    local shown="ragleaklab" previous="" arg
    for arg in "${args[@]}"; do
        if [[ $previous == --target-option ]]; then
            arg=${arg%%=*}
            arg="${arg%"${arg##*[![:space:]]}"}=..."
        fi
        shown+=" $(printf '%q' "$arg")"
        previous=$arg
    done
    echo "$shown"

    local verdict="" name absolute i
    local -a written=() names=(report junit sarif html markdown) before=()
    local -a files=("$report" "$junit" "$sarif" "$html" "$markdown")
    for i in 0 1 2 3 4; do before[i]=$(inode "${files[i]}"); done

    local code=0
    ragleaklab "${args[@]}" || code=$?

    for i in 0 1 2 3 4; do
        name=${names[i]}
        if [[ -f ${files[i]} && $(inode "${files[i]}") != "${before[i]}" ]]; then
            absolute="$(cd -- "$(dirname -- "${files[i]}")" && pwd -P)/${files[i]##*/}"
            output "$name" "$absolute"
            written+=("$absolute")
            if [[ $name == report ]]; then
                verdict=$(read_verdict "$absolute") || bad_input "$absolute has no verdict"
            fi
        else
            output "$name" ""
        fi
    done
    output verdict "$verdict"
    output exit-code "$code"
    if [[ -n ${GITHUB_OUTPUT:-} ]]; then
        local delimiter="ragleaklab_files_$RANDOM$RANDOM$RANDOM"
        {
            echo "files<<$delimiter"
            if ((${#written[@]})); then printf '%s\n' "${written[@]}"; fi
            echo "$delimiter"
        } >>"$GITHUB_OUTPUT"
    fi
    if [[ -z $verdict && -n ${GITHUB_STEP_SUMMARY:-} ]]; then
        # ragleaklab wrote no report (bad input, or a plugin could not be used): say so where
        # the job's summary is read, not only in the log.
        printf '## ragleaklab: no report (exit code %s)\n\nSee the log of the ragleaklab step.\n' \
            "$code" >>"$GITHUB_STEP_SUMMARY"
    fi
    exit "$code"
}

gate() {
    local code=${RLK_EXIT_CODE:-}
    case $code in
        0) echo "ragleaklab: passed (exit code 0)" ;;
        1)
            echo "::error title=ragleaklab::a tested pack failed (exit code 1)"
            exit 1
            ;;
        2)
            echo "::error title=ragleaklab::bad input (exit code 2)"
            exit 2
            ;;
        3)
            echo "::error title=ragleaklab::a pack was not tested, or a plugin could not be used (exit code 3)"
            exit 3
            ;;
        "")
            echo "::error title=ragleaklab::ragleaklab did not run (see the steps above)"
            exit 1
            ;;
        *)
            echo "::error title=ragleaklab::ragleaklab exited $code"
            exit "$code"
            ;;
    esac
}

case ${1:-} in
    install) install ;;
    run) run ;;
    gate) gate ;;
    *) usage ;;
esac
