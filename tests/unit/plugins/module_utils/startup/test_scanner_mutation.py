# -*- coding: utf-8 -*-
# Copyright: gpufleet.sglang contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""startup/scanner at its cut-offs and in its states, in exact words: each bound at the line where it turns, each fatal
marker alone, the traceback layouts (blank lines, chains, tails, nested and headerless parts, lost indentation), which
records end a traceback, the evidence a frozen verdict keeps, and the secrets the scanner learns. Small logs written
for one behaviour each; the real logs are in test_startup_log.py and test_startup_corpus.py."""

from __future__ import annotations

import pytest

from ansible_collections.gpufleet.sglang.plugins.module_utils.startup.scanner import StartupLogScanner, scan_startup_log

HEADER = "Traceback (most recent call last):"
TOP = '  File "/srv/sglang/launch_server.py", line 14, in <module>'  # a process's top frame: its traceback is fatal
INNER = '  File "/srv/sglang/srt/managers/scheduler.py", line 310, in run'  # not a top frame
CODE = "    run_scheduler()"
PROGRESS = "Loading safetensors checkpoint shards:   0% Completed | 0/2 [00:00<?, ?it/s]"  # a line no traceback holds
UNIT = "sglang.service: "
EXIT = UNIT + "Main process exited, code=exited, status=1/FAILURE"
NO_HEADER = "(the log holds no 'Traceback (most recent call last):' line above this)"  # a headerless traceback's first line


def scanner_fed(*lines, **kwargs):
    scanner = StartupLogScanner(**kwargs)
    for line in lines:
        scanner.feed(line)
    return scanner


def fillers(count, start=0):
    return ["filler line %d" % number for number in range(start, start + count)]


# ----------------------------------------------------------------------------------------------- cut-offs
def test_the_last_lines_are_the_newest_twenty():
    result = scanner_fed(*fillers(25)).result()
    assert result["last_lines"] == fillers(20, start=5)
    assert result["lines_seen"] == 25


def test_systemd_s_lines_are_the_newest_eight():
    lines = [UNIT + "Failed with result 'exit-code'. (%d)" % number for number in range(10)]
    result = scanner_fed(*lines).result()
    assert result["outcome"] == "failed"
    assert result["systemd_line"] == "\n".join(lines[2:])


@pytest.mark.parametrize("after, final", [(200, False), (201, True)])
def test_a_marker_waits_two_hundred_lines_for_its_traceback(after, final):
    scanner = scanner_fed("Rank 0 scheduler is dead", *fillers(after))
    result = scanner.result()
    assert result["outcome"] == "failed"
    assert (result["is_final"], result["pending"]) == ((True, None) if final else (False, "awaiting_traceback"))


@pytest.mark.parametrize("between, taken", [(199, True), (200, False)])
def test_an_open_traceback_goes_stale_after_two_hundred_lines(between, taken):
    """A line that is not its own (a progress bar) leaves a traceback open; it is closed once it got no line for 200."""
    scanner = scanner_fed(HEADER, TOP, *([PROGRESS] * between), CODE)
    result = scanner.result()
    expected = "\n".join([HEADER, TOP] + ([CODE] if taken else []))
    assert result["traceback"] == expected
    assert result["pending"] == ("traceback_open" if taken else None)


@pytest.mark.parametrize("between, taken", [(199, True), (200, False)])
def test_a_traceback_after_the_verdict_froze_goes_stale_the_same(between, taken):
    scanner = scanner_fed(HEADER, TOP, "ValueError: first", "[2026-01-01 00:00:00] INFO done",
                          HEADER, INNER, *([PROGRESS] * between), CODE)
    result = scanner.result()
    assert result["is_final"]
    assert result["tracebacks"][1] == "\n".join([HEADER, INNER] + ([CODE] if taken else []))


def _plain_traceback_then_marker(gap):
    """A traceback no frame makes fatal, closed by a record, ``gap`` lines before a marker that waits for one."""
    return [HEADER, INNER, "ValueError: plain", "[2026-01-01 00:00:00] INFO next"] + fillers(gap - 1) + ["Rank 0 scheduler is dead"]


@pytest.mark.parametrize("gap, explains", [(50, True), (51, False)])
def test_a_traceback_closed_up_to_fifty_lines_before_a_marker_explains_it(gap, explains):
    result = scanner_fed(*_plain_traceback_then_marker(gap)).result()
    assert result["outcome"] == "failed"
    if explains:
        assert result["traceback"] == "\n".join([HEADER, INNER, "ValueError: plain"])
        assert (result["is_final"], result["pending"]) == (True, None)
    else:
        assert result["traceback"] is None
        assert (result["is_final"], result["pending"]) == (False, "awaiting_traceback")


def test_after_the_process_ended_the_last_traceback_explains_the_marker_however_far():
    scanner = scanner_fed(*_plain_traceback_then_marker(120))
    scanner.close(exited=True)
    assert scanner.result()["traceback"] == "\n".join([HEADER, INNER, "ValueError: plain"])


def test_close_means_the_process_ended_unless_told_otherwise():
    scanner = scanner_fed("server_args=ServerArgs(model_path='m')")
    scanner.close()
    assert scanner.result()["outcome"] == "failed"
    other = scanner_fed("server_args=ServerArgs(model_path='m')")
    other.close(exited=False)
    assert other.result()["outcome"] == "starting"


def _long_traceback(frames):
    body = ['  File "/srv/m.py", line %d, in f%d' % (number, number) for number in range(frames)]
    return [HEADER] + body + ["ValueError: deep"]


@pytest.mark.parametrize("frames, omitted", [(1998, 0), (1999, 1), (2001, 3)])
def test_a_long_traceback_keeps_a_thousand_lines_at_each_end(frames, omitted):
    lines = _long_traceback(frames)  # the header and the exception line count too
    text = scan_startup_log("\n".join(lines), ended=True)["traceback"]
    if omitted:
        expected = lines[:1000] + ["... %d traceback lines omitted ..." % omitted] + lines[1000 + omitted:]
    else:
        expected = lines
    assert text.split("\n") == expected


def test_a_short_traceback_keeps_every_line():
    lines = _long_traceback(3)
    assert scan_startup_log("\n".join(lines), ended=True)["traceback"] == "\n".join(lines)


@pytest.mark.parametrize("count, joined", [(39, True), (40, False)])
def test_an_exception_s_tail_holds_forty_lines_for_a_chain_to_come(count, joined):
    """The blank line and 39 lines of message are held; the next one ends the traceback, a chain joins it."""
    message = ["detail %d" % number for number in range(count)]
    lines = [HEADER, TOP, "ValueError: first", ""] + message + [
        "During handling of the above exception, another exception occurred:", "", HEADER, INNER, "RuntimeError: second"]
    result = scan_startup_log("\n".join(lines), ended=True)
    if joined:
        assert result["tracebacks"] == ["\n".join(lines)]
    else:
        assert result["tracebacks"][0] == "\n".join([HEADER, TOP, "ValueError: first"])
        assert len(result["tracebacks"]) == 2


@pytest.mark.parametrize("count, returned, omitted", [(16, 16, 0), (17, 16, 1)])
def test_sixteen_tracebacks_come_back_whole_then_a_count(count, returned, omitted):
    lines = []
    for number in range(count):
        lines += [HEADER, TOP, "ValueError: number %d" % number, "[2026-01-01 00:00:00] INFO next"]
    result = scan_startup_log("\n".join(lines), ended=True)
    assert len(result["tracebacks"]) == returned
    assert result["tracebacks"][-1].endswith("ValueError: number %d" % (returned - 1))
    assert (result["tracebacks_omitted"], result["tracebacks_seen"]) == (omitted, count)


def test_nothing_is_omitted_from_a_start_that_did_not_fail():
    result = scanner_fed(HEADER, INNER, "ValueError: harmless", "[2026-01-01 00:00:00] INFO next").result()
    assert result["outcome"] == "starting"
    assert (result["tracebacks"], result["tracebacks_omitted"], result["systemd_line"]) == ([], 0, None)


def test_a_failure_with_one_traceback_omits_none():
    result = scan_startup_log("\n".join([HEADER, TOP, "ValueError: x"]), ended=True)
    assert (result["tracebacks_omitted"], result["tracebacks_seen"]) == (0, 1)


# ----------------------------------------------------------------------------------------------- fatal lines
@pytest.mark.parametrize("line", [
    "Received sigquit from a child process. It usually means the child failed.",
    "SIGQUIT received. signum=None, frame=None. It usually means the child failed.",
    "Rank 0 scheduler died during initialization (exit code: -9). If exit code is -9 (SIGKILL), a common cause is the OS OOM killer.",
    "Initialization failed. Please see the error messages above.",
    "Subprocess scheduler_0 (pid=4242) crashed with exit code -9.",
    "Child process unexpectedly failed with an exit code 1. pid=4242",
    "Rank 1 scheduler is dead. Please check if there are relevant logs.",
    "Killed",
])
def test_each_marker_fails_the_start_and_waits_for_the_traceback_it_announces(line):
    result = scanner_fed("server_args=ServerArgs(model_path='m')", line).result()
    assert result["outcome"] == "failed"
    assert (result["fatal_line"], result["error_message"]) == (line, line)
    assert (result["is_final"], result["pending"]) == (False, "awaiting_traceback")


@pytest.mark.parametrize("line", ["Failed: Cuda error /sgl-kernel/csrc/allreduce/custom_all_reduce.cuh:223 'invalid argument'",
                                  "ERROR:    [Errno 98] error while attempting to bind on address ('0.0.0.0', 30000): address already in use"])
def test_a_marker_that_explains_itself_is_final_at_once(line):
    result = scanner_fed(line).result()
    assert (result["outcome"], result["is_final"], result["pending"]) == ("failed", True, None)


@pytest.mark.parametrize("exception", [
    "RuntimeError: Not enough memory. Please try to increase --mem-fraction-static. Current value: mem_fraction_static=0.88",
    "RuntimeError: Not enough memory to allocate KV cache: needed 12.00 GB",
    "Exception: Capture cuda graph failed: CUDA error: out of memory",
])
def test_an_exception_sglang_raises_only_fatally_fails_a_traceback_of_inner_frames(exception):
    result = scanner_fed(HEADER, INNER, CODE, exception).result()
    assert result["outcome"] == "failed"
    assert result["error_message"] == exception
    assert result["pending"] == "traceback_open"


def test_a_traceback_of_inner_frames_with_another_exception_fails_nothing():
    result = scanner_fed(HEADER, INNER, CODE, "RuntimeError: Not enough tokens", "[2026-01-01 00:00:00] INFO next").result()
    assert (result["outcome"], result["tracebacks_seen"]) == ("starting", 1)


@pytest.mark.parametrize("frame, fatal", [
    ('  File "/usr/lib/python3.10/runpy.py", line 196, in _run_module_as_main', True),
    ('  File "/usr/lib/python3.10/runpy.py", line 86, in _run_code', True),
    ('  File "/usr/lib/python3.10/multiprocessing/process.py", line 314, in _bootstrap', True),
    ('  File "/srv/sglang/srt/process.py", line 314, in _bootstrap', False),
    ('  File "/usr/lib/python3.10/multiprocessing/process.py", line 108, in run', False),
    ('  File "/srv/sglang/srt/server.py", line 12', False),
])
def test_a_traceback_is_fatal_when_its_first_frame_is_a_process_s_top(frame, fatal):
    for lines in ([HEADER, frame, CODE], [frame, CODE]):  # with its header, and headerless
        result = scanner_fed(*lines).result()
        assert result["outcome"] == ("failed" if fatal else "starting"), lines


def test_a_top_frame_after_the_first_does_not_make_a_traceback_fatal():
    result = scanner_fed(HEADER, INNER, CODE, TOP, CODE, "ValueError: x", "[2026-01-01 00:00:00] INFO next").result()
    assert result["outcome"] == "starting"


def test_a_fatal_traceback_without_a_header_line_names_the_header_as_its_fatal_line():
    result = scanner_fed(HEADER, TOP, CODE).result()
    assert result["fatal_line"] == HEADER


@pytest.mark.parametrize("header", [
    "Exception in run_tp_server:",
    "Exception in run_data_parallel_controller_process:",
    "Scheduler hit an exception:",
    "Initialization failed. warmup error:",
])
def test_sglang_s_fatal_header_on_the_traceback_s_line_fails_the_start(header):
    line = header + " " + HEADER
    result = scanner_fed(line, INNER, CODE).result()
    assert (result["outcome"], result["fatal_line"]) == ("failed", line)


def test_another_text_before_a_traceback_s_header_is_not_fatal():
    result = scanner_fed("Some library said: " + HEADER, INNER, CODE).result()
    assert result["outcome"] == "starting"


def test_sglang_s_fatal_header_as_the_record_just_before_the_traceback_fails_the_start():
    record = "[2026-01-01 00:00:00 TP0] Scheduler hit an exception:"
    result = scanner_fed(record, HEADER, INNER, CODE, "ValueError: inner").result()
    assert (result["outcome"], result["fatal_line"], result["rank"]) == ("failed", record, "TP0")
    assert result["error_message"] == "ValueError: inner"


def test_a_fatal_header_two_lines_above_the_traceback_is_not_its_header():
    record = "[2026-01-01 00:00:00 TP0] Scheduler hit an exception:"
    result = scanner_fed(record, "some other line", HEADER, INNER, CODE, "ValueError: inner").result()
    assert result["outcome"] == "starting"


def test_a_fatal_header_as_a_journal_record_gives_the_traceback_its_process():
    scanner = StartupLogScanner()
    scanner.feed_entry("[2026-01-01 00:00:00 TP0] Scheduler hit an exception:", 4300, "python3", 1.0)
    scanner.feed_entry(HEADER, 4300, "python3", 1.1)
    scanner.feed_entry(INNER, 4300, "python3", 1.2)
    scanner.feed_entry("[2026-01-01 00:00:01 TP0] Load weight begin", 4301, "python3", 1.3)  # another process's record
    scanner.feed_entry(CODE, 4300, "python3", 1.4)
    result = scanner.result()
    assert result["outcome"] == "failed"
    assert result["traceback"] == "\n".join([HEADER, INNER, CODE])
    assert result["pending"] == "traceback_open"


# ----------------------------------------------------------------------------------------------- traceback layouts
def test_blank_lines_inside_a_chained_traceback_are_kept_where_they_were():
    lines = [HEADER, TOP, "", "", CODE, "ValueError: first", "", "more about the first", "",
             "During handling of the above exception, another exception occurred:", "", "",
             HEADER, INNER, CODE, "RuntimeError: second"]
    result = scan_startup_log("\n".join(lines), ended=True)
    assert result["tracebacks"] == ["\n".join(lines)]
    assert result["error_message"] == "RuntimeError: second"


def test_a_chain_separator_followed_by_something_else_ends_the_traceback():
    lines = [HEADER, TOP, CODE, "ValueError: first", "", "The above exception was the direct cause of the following exception:",
             "", "SIGQUIT received. signum=None, frame=None."]
    result = scanner_fed(*lines).result()
    assert result["tracebacks"][0] == "\n".join(lines[:6])
    assert (result["error_message"], result["is_final"]) == ("ValueError: first", True)


def test_two_tracebacks_one_after_the_other_are_two():
    lines = [HEADER, INNER, CODE, HEADER, TOP, CODE, "ValueError: second"]
    result = scanner_fed(*lines).result()
    assert result["tracebacks"] == ["\n".join(lines[:3]), "\n".join(lines[3:])]
    assert result["traceback"] == "\n".join(lines[3:])


@pytest.mark.parametrize("indent", [" ", "\t"])
def test_an_indented_line_with_a_traceback_header_is_a_new_traceback_not_a_nested_one(indent):
    nested = indent + "RuntimeError: failed: " + HEADER
    result = scanner_fed(HEADER, INNER, CODE, nested, TOP, CODE).result()
    assert result["tracebacks_seen"] == 2
    assert (result["traceback"], result["fatal_line"]) == ("\n".join([HEADER, TOP, CODE]), nested.strip())


def test_an_exception_that_carries_another_process_s_traceback_is_one_traceback():
    nested = "RuntimeError: Initialization failed. controller_init_state: " + HEADER
    lines = [HEADER, TOP, CODE, nested, '  File "/srv/sglang/srt/managers/controller.py", line 9, in init', "    start()"]
    result = scanner_fed(*lines).result()
    assert result["tracebacks"] == ["\n".join(lines)]
    assert result["error_message"] == nested


def test_the_nested_traceback_s_first_frame_is_read_as_a_first_frame():
    nested = "RuntimeError: Initialization failed. controller_init_state: " + HEADER
    result = scanner_fed(HEADER, INNER, CODE, nested, TOP, CODE).result()
    assert result["outcome"] == "failed"


def test_a_chained_part_s_first_frame_is_read_as_a_first_frame():
    lines = [HEADER, INNER, CODE, "ValueError: first", "", "During handling of the above exception, another exception occurred:",
             "", HEADER, TOP, CODE]
    result = scanner_fed(*lines).result()
    assert result["outcome"] == "failed"
    assert result["traceback"] == "\n".join(lines)


@pytest.mark.parametrize("layout", ["plain", "chained", "nested"])
def test_an_exception_line_right_after_a_header_is_the_exception(layout):
    before = {"plain": [],
              "chained": [HEADER, TOP, CODE, "ValueError: first", "", "During handling of the above exception, another exception occurred:", ""],
              "nested": [HEADER, TOP, CODE, "RuntimeError: Initialization failed. controller_init_state: " + HEADER]}[layout]
    lines = before + ([HEADER] if layout != "nested" else []) + ["KeyError: 'rope_scaling'", "[2026-01-01 00:00:00] INFO next"]
    result = scan_startup_log("\n".join(lines), ended=True)
    assert result["error_message"] == "KeyError: 'rope_scaling'"


def test_a_code_line_that_looked_like_an_exception_gives_way_to_the_next_frame():
    """A paste without indentation: ``Result: int = ...`` reads as an exception line until a frame follows it."""
    lines = ['File "/srv/sglang/launch_server.py", line 3, in <module>', "Result: int = compute()",
             'File "/srv/sglang/srt/compute.py", line 9, in compute', "load()"]
    result = scan_startup_log("\n".join(lines), ended=True)
    assert result["tracebacks"] == ["\n".join([NO_HEADER] + lines)]
    assert result["error_message"] != "Result: int = compute()"


def test_an_unindented_paste_reads_its_first_line_after_a_frame_as_code():
    lines = ['File "/srv/sglang/srt/server.py", line 3, in main', "main()", "ValueError: bad"]
    result = scan_startup_log("\n".join([HEADER] + lines), ended=True)
    assert result["error_message"] == "ValueError: bad"
    headerless = scan_startup_log("\n".join(lines), ended=True)
    assert headerless["error_message"] == "ValueError: bad"


def test_an_exception_without_a_message_right_after_a_frame_is_the_exception():
    result = scan_startup_log("\n".join([HEADER, 'File "/srv/sglang/srt/server.py", line 3, in main', "KeyboardInterrupt"]), ended=True)
    assert result["error_message"] == "KeyboardInterrupt"


def test_tab_indented_code_lines_are_code():
    lines = [HEADER, TOP, "\tx = load()", "\ty = run(x)", "ValueError: z"]
    result = scan_startup_log("\n".join(lines), ended=True)
    assert (result["error_message"], result["traceback"]) == ("ValueError: z", "\n".join(lines))


@pytest.mark.parametrize("mark", ["^^^^^^^^^^^^", "~~~~^^^^~~~", "...", "[Previous line repeated 996 more times]"])
def test_caret_lines_and_elisions_stay_between_frames_even_unindented(mark):
    lines = [HEADER, 'File "/srv/sglang/launch_server.py", line 3, in <module>', "main()", mark, "ValueError: bad"]
    result = scan_startup_log("\n".join(lines), ended=True)
    assert (result["error_message"], result["traceback"]) == ("ValueError: bad", "\n".join(lines))


def test_a_faulthandler_dump_ends_at_its_own_lines():
    lines = ["Fatal Python error: Segmentation fault", "", "Thread 0x00007f3a (most recent call first):",
             '  File "/srv/sglang/srt/server.py", line 3 in main', "Extension modules: numpy.core._multiarray_umath (total: 1)",
             "ValueError: later"]
    result = scan_startup_log("\n".join(lines), ended=True)
    assert result["tracebacks"][0] == "\n".join(
        [NO_HEADER, lines[3]])


def test_a_progress_line_between_frames_is_not_part_of_the_traceback():
    scanner = scanner_fed(HEADER, INNER, PROGRESS, CODE, "ValueError: v")
    scanner.close()
    result = scanner.result()
    assert result["traceback"] == "\n".join([HEADER, INNER, CODE, "ValueError: v"])
    assert "weights_loading" in [entry["phase"] for entry in result["phases"]]


def test_a_code_line_that_quotes_a_phase_s_words_is_not_that_phase():
    result = scanner_fed(HEADER, INNER, "    logger.info('Load weight begin')", "ValueError: v").result()
    assert [entry["phase"] for entry in result["phases"]] == ["process_started"]


@pytest.mark.parametrize("after", [PROGRESS, "Call stack:", "Extension modules: numpy (total: 1)"])
def test_a_line_that_starts_something_new_ends_an_exception_s_message(after):
    result = scanner_fed(HEADER, TOP, CODE, "ValueError: v", after).result()
    assert result["traceback"] == "\n".join([HEADER, TOP, CODE, "ValueError: v"])


def test_the_line_that_ends_an_exception_is_read_on_its_own():
    result = scanner_fed(HEADER, INNER, CODE, "ValueError: v", PROGRESS).result()
    assert [entry["phase"] for entry in result["phases"]] == ["process_started", "weights_loading"]


@pytest.mark.parametrize("message", [["SIGQUIT received. signum=None"], ["", "SIGQUIT received. signum=None"],
                                     ["", "more", "SIGQUIT received. signum=None"]])
def test_a_marker_s_words_inside_an_exception_s_message_are_the_message(message):
    """Held after a blank line or not, the message of a traceback that is not fatal does not fail the start (yet)."""
    result = scanner_fed(HEADER, INNER, CODE, "ValueError: v", *message).result()
    assert result["outcome"] == "starting"


def test_a_marker_s_words_in_an_exception_line_are_the_exception():
    result = scanner_fed(HEADER, INNER, CODE, "RuntimeError: SIGQUIT received. signum=None").result()
    assert result["outcome"] == "starting"


def test_a_marker_after_a_broken_chain_is_read_on_its_own():
    lines = [HEADER, INNER, CODE, "ValueError: first", "", "During handling of the above exception, another exception occurred:",
             "Rank 0 scheduler is dead"]
    result = scanner_fed(*lines).result()
    assert (result["outcome"], result["fatal_line"]) == ("failed", "Rank 0 scheduler is dead")


def test_a_progress_line_in_an_exception_s_tail_ends_it():
    lines = [HEADER, INNER, CODE, "ValueError: v", "", "more", PROGRESS,
             "During handling of the above exception, another exception occurred:", "", HEADER, INNER, "RuntimeError: w"]
    result = scan_startup_log("\n".join(lines), ended=True)
    assert result["tracebacks"][0] == "\n".join([HEADER, INNER, CODE, "ValueError: v"])
    assert len(result["tracebacks"]) == 2
    assert "weights_loading" in [entry["phase"] for entry in result["phases"]]


def test_torch_compile_s_user_code_frames_are_part_of_the_message():
    lines = [HEADER, TOP, CODE, "torch._dynamo.exc.Unsupported: call_function in skip_files", "", "from user code:",
             '   File "/srv/sglang/srt/models/llama.py", line 10, in forward', "    x = y", "",
             "Set TORCHDYNAMO_VERBOSE=1 for the internal stack trace"]
    result = scan_startup_log("\n".join(lines), ended=True)
    assert result["error_message"] == "torch._dynamo.exc.Unsupported: call_function in skip_files"
    assert result["traceback"] == "\n".join(lines[:8])  # the text after the blank line is not the message's


# ----------------------------------------------------------------------------------------------- records and ranks
@pytest.mark.parametrize("tags, record, closes", [
    (None, "[2026-01-01 00:00:00] Load weight begin", True),
    ("TP0", "[2026-01-01 00:00:00 TP0] Load weight begin", True),
    ("TP0", "[2026-01-01 00:00:00 TP1] Load weight begin", False),
])
def test_a_record_of_the_traceback_s_own_rank_ends_it_another_rank_s_does_not(tags, record, closes):
    header = ("[2026-01-01 00:00:00 %s] Scheduler hit an exception: " % tags + HEADER) if tags else HEADER
    result = scanner_fed(header, TOP, record, CODE).result()
    assert result["traceback"] == "\n".join([HEADER, TOP] + ([] if closes else [CODE]))
    assert result["is_final"] is closes


@pytest.mark.parametrize("pid, closes", [(4300, True), (4301, False)])
def test_a_record_of_the_traceback_s_own_process_ends_it_another_process_s_does_not(pid, closes):
    scanner = StartupLogScanner()
    for number, (message, sender) in enumerate([(HEADER, 4300), (TOP, 4300), ("[2026-01-01 00:00:00] Load weight begin", pid),
                                                (CODE, 4300)]):
        scanner.feed_entry(message, sender, "python3", 1.0 + number)
    result = scanner.result()
    assert result["traceback"] == "\n".join([HEADER, TOP] + ([] if closes else [CODE]))


def test_a_record_from_the_journal_ends_a_pasted_traceback():
    """A traceback whose process is unknown (pasted) is ended by a record of any process."""
    scanner = scanner_fed(HEADER, TOP)
    scanner.feed_entry("[2026-01-01 00:00:00] Load weight begin", 4301, "python3", 1.0)
    scanner.feed_entry(CODE, 4301, "python3", 1.1)
    assert scanner.result()["traceback"] == "\n".join([HEADER, TOP])


def test_a_frame_of_another_process_after_an_exception_starts_its_own_traceback():
    scanner = StartupLogScanner()
    for number, (message, sender) in enumerate([(HEADER, 4300), (INNER, 4300), (CODE, 4300), ("ValueError: first", 4300),
                                                (TOP, 4301), (CODE, 4301)]):
        scanner.feed_entry(message, sender, "python3", 1.0 + number)
    result = scanner.result()
    assert result["tracebacks_seen"] == 2
    assert result["traceback"] == "\n".join([NO_HEADER, TOP, CODE])


def test_a_record_in_an_exception_s_tail_ends_it_whatever_its_rank():
    lines = ["[2026-01-01 00:00:00 TP0] ERROR: Scheduler hit an exception: " + HEADER, INNER, CODE, "ValueError: v", "", "more",
             "[2026-01-01 00:00:00 TP1] Load weight begin",
             "During handling of the above exception, another exception occurred:", "", HEADER, INNER, "RuntimeError: w"]
    result = scan_startup_log("\n".join(lines), ended=True)
    assert result["tracebacks"][0] == "\n".join([HEADER, INNER, CODE, "ValueError: v"])
    assert len(result["tracebacks"]) == 2


def test_a_traceback_a_logger_relays_line_by_line_is_read_whole_on_its_rank():
    lines = ["[2026-02-26 15:56:59 TP0] ERROR: " + HEADER,
             "[2026-02-26 15:56:59 TP0] ERROR: " + TOP,
             "[2026-02-26 15:56:59 TP0] ERROR: " + CODE,
             "[2026-02-26 15:56:59 TP0] ERROR: ValueError: relayed"]
    result = scan_startup_log("\n".join(lines), ended=True)
    assert result["traceback"] == "\n".join([HEADER, TOP, CODE, "ValueError: relayed"])
    assert (result["error_message"], result["rank"]) == ("ValueError: relayed", "TP0")


def test_a_level_before_a_header_that_is_not_a_record_relays_nothing():
    lines = ["ERROR: " + HEADER, TOP, CODE, "[2026-02-26 15:56:59] ERROR: " + CODE]
    result = scanner_fed(*lines).result()
    assert result["traceback"] == "\n".join([HEADER, TOP, CODE])
    assert result["is_final"]


# ----------------------------------------------------------------------------------------------- argparse
def test_a_program_s_own_argparse_error_is_a_rejected_command_line():
    line = "launch_server.py: error: the model path does not exist"
    result = scanner_fed("server_args=ServerArgs(model_path='m')", line).result()
    assert (result["outcome"], result["cause"], result["fatal_line"], result["is_final"]) == ("failed", "invalid_arguments", line, True)


@pytest.mark.parametrize("gap, rejected", [(99, True), (100, False)])
def test_any_program_s_error_up_to_a_hundred_lines_after_a_usage_banner_is_the_parser_s(gap, rejected):
    lines = ["filler before %d" % number for number in range(150)] + ["usage: serve [-h] [--model MODEL]"]
    lines += fillers(gap - 1) + ["serve: error: no such thing"]
    result = scanner_fed(*lines).result()
    assert result["outcome"] == ("failed" if rejected else "starting")
    if rejected:
        assert (result["cause"], result["error_message"]) == ("invalid_arguments", "serve: error: no such thing")


def test_a_program_s_error_without_a_usage_banner_is_not_the_parser_s():
    result = scanner_fed("serve: error: no such thing").result()
    assert result["outcome"] == "starting"


def test_an_argparse_error_after_systemd_saw_the_exit_is_still_the_cause():
    line = "launch_server.py: error: argument --tp-size: invalid int value: 'two'"
    result = scanner_fed(UNIT + "Main process exited, code=exited, status=2/INVALIDARGUMENT", line).result()
    assert (result["cause"], result["error_message"], result["traceback"]) == ("invalid_arguments", line, None)


def test_an_argparse_error_after_a_fatal_traceback_is_not_the_cause():
    line = "launch_server.py: error: argument --tp-size: invalid int value: 'two'"
    result = scanner_fed(HEADER, TOP, CODE, "ValueError: first", line).result()
    assert result["cause"] != "invalid_arguments"
    assert result["error_message"] == "ValueError: first"


def test_an_argparse_error_is_told_without_an_earlier_traceback():
    line = "launch_server.py: error: argument --tp-size: invalid int value: 'two'"
    result = scanner_fed(HEADER, INNER, CODE, "ValueError: first", "[2026-01-01 00:00:00] INFO next", line).result()
    assert (result["cause"], result["traceback"], result["error_message"]) == ("invalid_arguments", None, line)


# ----------------------------------------------------------------------------------------------- serving and phases
PREFILL = "[2026-01-01 00:00:0%d%s] Prefill batch. #new-seq: 1, #new-token: 6, #cached-token: 0, token usage: 0.00"


@pytest.mark.parametrize("ranks, ready", [(("", ""), True), ((" TP0", " TP0"), True), ((" TP0", " TP1"), False), (("",), False)])
def test_a_second_prefill_batch_of_one_rank_is_serving(ranks, ready):
    lines = ["Uvicorn running on http://0.0.0.0:30000"] + [PREFILL % (number, rank) for number, rank in enumerate(ranks)]
    result = scanner_fed(*lines).result()
    assert result["outcome"] == ("ready" if ready else "starting")
    if ready:
        assert result["ready_line"] == lines[-1]


@pytest.mark.parametrize("line", ['  File "/srv/sglang/srt/sampling/custom_logit_processor.py", line 40, in apply_custom_logit_processor',
                                  '  File "/srv/sglang/srt/sampling/sampler.py", line 80, in _apply_custom_logit_processor',
                                  "        batch_next_token_ids = min_p_sampling_from_probs(probs, min_ps)"])
def test_a_frame_of_a_decoding_option_only_a_client_sets_is_serving(line):
    result = scanner_fed("Uvicorn running on http://0.0.0.0:30000", HEADER, INNER, line).result()
    assert (result["outcome"], result["ready_line"]) == ("ready", line.strip())


def test_a_prefill_batch_before_the_http_server_is_up_is_no_phase():
    result = scanner_fed("Load weight end", PREFILL % (1, "")).result()
    assert [entry["phase"] for entry in result["phases"]] == ["process_started", "weights_loading"]


def test_the_first_line_read_is_the_start_s_first_phase_not_a_blank_one():
    result = scanner_fed("", "   ", "server_args=ServerArgs(model_path='m')").result()
    assert result["phases"][0]["line"] == "server_args=ServerArgs(model_path='m')"
    assert result["phases"][0]["line_no"] == 3


GENERATE_OK = '127.0.0.1:40000 - "POST /generate HTTP/1.1" 200 OK'


def test_sglang_s_warmup_error_takes_back_a_ready_read_from_a_request():
    lines = [GENERATE_OK, "Initialization failed. warmup error: Traceback (most recent call last):", INNER, CODE, "ValueError: w"]
    scanner = scanner_fed(*lines[:1])
    assert scanner.result()["outcome"] == "ready"
    for line in lines[1:]:
        scanner.feed(line)
    result = scanner.result()
    assert result["outcome"] == "failed"
    assert "ready" not in [entry["phase"] for entry in result["phases"]]
    assert (result["cause"], result["fatal_line"]) == ("warmup_failed", lines[1])


def test_after_a_taken_back_ready_sglang_s_ready_line_is_the_ready_phase():
    ready = "The server is fired up and ready to roll!"
    scanner = scanner_fed(GENERATE_OK, "[2026-01-01 00:00:00] Initialization failed. warmup error: something", ready)
    result = scanner.result()
    assert result["outcome"] == "ready"
    assert [entry["line"] for entry in result["phases"] if entry["phase"] == "ready"] == [ready]


def test_a_warmup_alike_trace_without_sglang_s_request_error_leaves_the_fatal_line_to_the_exit():
    frame = '  File "/srv/sglang/srt/entrypoints/openai/serving_chat.py", line 80, in handle_request'
    scanner = scanner_fed("Uvicorn running on http://0.0.0.0:30000", HEADER, frame, CODE, "ValueError: image")
    assert scanner.result()["outcome"] == "ready"
    scanner.feed(EXIT)
    scanner.close()
    result = scanner.result()
    assert result["outcome"] == "failed"
    assert result["fatal_line"] != frame.strip()


def test_an_out_of_memory_after_the_weights_loaded_gets_the_kv_cache_s_hint():
    oom = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB"
    after = scan_startup_log("\n".join(["Load weight begin", "Load weight end", oom]), ended=True)
    before = scan_startup_log("\n".join(["Load weight begin", oom]), ended=True)
    assert (after["phase"], before["phase"]) == ("weights_loading", "weights_loading")
    assert after["hint"].startswith("GPU memory ran out after the weights were loaded")
    assert before["hint"].startswith("The model weights do not fit in GPU memory")


# ----------------------------------------------------------------------------------------------- the verdict's evidence
OOM_TB = [HEADER, INNER, CODE, "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB"]


def test_the_traceback_that_decided_the_cause_is_the_one_returned():
    lines = OOM_TB + ["[2026-01-01 00:00:00] INFO next", HEADER, TOP, CODE, "RuntimeError: the scheduler stopped"]
    result = scan_startup_log("\n".join(lines), ended=True)
    assert result["cause"] == "gpu_out_of_memory"
    assert result["traceback"] == "\n".join(OOM_TB)


def test_a_frozen_verdict_keeps_its_cause_while_later_tracebacks_are_collected():
    lines = [HEADER, TOP, CODE, "RuntimeError: the scheduler stopped", "[2026-01-01 00:00:00] INFO next"]
    scanner = scanner_fed(*lines)
    assert scanner.result()["is_final"]
    cause = scanner.result()["cause"]
    for line in OOM_TB + ["[2026-01-01 00:00:00] INFO next", "[2026-01-01 00:00:00] INFO last"]:
        scanner.feed(line)
    result = scanner.result()
    assert (result["cause"], result["error_message"]) == (cause, "RuntimeError: the scheduler stopped")
    assert result["tracebacks"][1] == "\n".join(OOM_TB)


def test_a_frozen_verdict_still_collects_headerless_tracebacks():
    scanner = scanner_fed(HEADER, TOP, CODE, "RuntimeError: stop", "[2026-01-01 00:00:00] INFO next", INNER, CODE, "ValueError: late")
    assert scanner.result()["tracebacks"][1] == "\n".join(
        [NO_HEADER, INNER, CODE, "ValueError: late"])


def test_a_marker_with_a_traceback_still_open_waits_for_it():
    result = scanner_fed("Rank 0 scheduler is dead", HEADER, INNER, CODE).result()
    assert (result["outcome"], result["is_final"], result["pending"]) == ("failed", False, "traceback_open")
    assert result["traceback"] == "\n".join([HEADER, INNER, CODE])


def test_a_decisive_record_is_the_fatal_line_when_sglang_printed_no_other():
    record = "[2026-01-01 00:00:00 TP0] CUDA out of memory. Tried to allocate 20.00 GiB."
    result = scanner_fed(record, UNIT + "Main process exited, code=killed, status=9/KILL").result()
    assert result["cause"] == "gpu_out_of_memory"
    assert result["fatal_line"] == result["error_message"] == "CUDA out of memory. Tried to allocate 20.00 GiB."


def test_a_plain_line_is_not_taken_for_an_exception():
    result = scanner_fed("some plain words", EXIT).result()
    assert result["error_message"] == "sglang.service: Main process exited, code=exited, status=1/FAILURE"


# ----------------------------------------------------------------------------------------------- secrets and input
def test_the_scanner_learns_sixty_four_secrets_of_six_characters_or_more():
    """Secrets the caller gives that are no text take no place among the 64 learned ones."""
    lines = ["api_key='short'", "api_key='sixsix'"]
    lines += ["server_args=ServerArgs(api_key='key%04dvalue')" % number for number in range(66)]
    lines += ["bare key0062value key0063value sixsix short"]
    result = scanner_fed(*lines, secrets=[None, "", 12345]).result()
    assert result["last_lines"][-1] == "bare ******** key0063value ******** short"


def test_secrets_that_are_not_text_are_ignored():
    result = scanner_fed("token hunter2secret and 12345", secrets=[None, "", 12345, "hunter2secret"]).result()
    assert result["last_lines"] == ["token ******** and 12345"]


def test_bytes_and_carriage_returns_are_read_as_text():
    scanner = StartupLogScanner()
    scanner.feed(b"first line XX\r")
    scanner.feed("second line\r")
    assert scanner.result()["last_lines"] == ["first line XX", "second line"]
    whole = scan_startup_log(b"one\xff\ntwo XX\n", ended=True)
    assert whole["last_lines"] == ["one\ufffd", "two XX"]


def test_a_journal_message_with_html_entities_is_read_as_the_program_wrote_it():
    scanner = StartupLogScanner()
    scanner.feed_entry("ValueError: a &lt; b\nsecond &amp; line", 4300, "python3", 1.0)
    prefix = "1970-01-01T00:00:01.000000+00:00 localhost python3[4300]: "
    assert scanner.result()["last_lines"] == [prefix + "ValueError: a < b", "second & line"]


# ----------------------------------------------------------------------------------------------- lines a terminal broke
def _padded(text, width, at):
    """``text`` made ``width`` characters long by x's inserted at ``at``."""
    return text[:at] + "x" * (width - len(text)) + text[at:]


@pytest.mark.parametrize("width, joined", [(80, True), (79, False)])
def test_a_pasted_line_of_eighty_characters_or_more_may_go_on_in_the_next(width, joined):
    first = _padded("ValueError: while loading the model the GPU said: CUDA out of mem", width, 18)
    result = scanner_fed(first, "ory. Tried to allocate 2.00 GiB", EXIT).result()
    if joined:
        assert result["cause"] == "gpu_out_of_memory"
        assert result["error_message"] == first + "ory. Tried to allocate 2.00 GiB"  # the exception line, whole again
    else:
        assert (result["cause"], result["error_message"]) == ("unknown", first)


@pytest.mark.parametrize("rest, joined", [("ory, tried to allocate 2.00 GiB", True), ("ory. Tried to allocate 2.00 GiB", False)])
def test_a_line_that_starts_like_the_long_one_is_its_next_update_not_its_rest(rest, joined):
    first = _padded("ory. Tried to al while loading the model the GPU said: CUDA out of mem", 80, 17)
    result = scanner_fed(first, rest, EXIT).result()
    assert result["cause"] == ("gpu_out_of_memory" if joined else "unknown")


def test_a_journal_entry_is_never_the_rest_of_a_long_line():
    first = _padded("ValueError: while loading the model the GPU said: CUDA out of mem", 80, 18)
    scanner = StartupLogScanner()
    for number, message in enumerate([first, "ory. Tried to allocate 2.00 GiB"]):
        scanner.feed_entry(message, 4300, "python3", 1.0 + number)
    scanner.feed_entry("Main process exited, code=exited, status=1/FAILURE", 1, "systemd", 3.0)
    assert scanner.result()["cause"] == "unknown"


def test_a_journal_entry_that_holds_a_flattened_traceback_is_read_as_its_lines():
    scanner = StartupLogScanner()
    scanner.feed_entry('Traceback (most recent call last):  File "/srv/a.py", line 3, in <module>    main()  ValueError: flat',
                       4300, "python3", 1.0)
    result = scanner.result()
    assert result["traceback"] == "\n".join([HEADER, '  File "/srv/a.py", line 3, in <module>', "    main()", "ValueError: flat"])


# ----------------------------------------------------------------------------------------------- more layouts
@pytest.mark.parametrize("state, before", [
    ("frames", [HEADER, TOP]),
    ("chain", [HEADER, TOP, CODE, "ValueError: first", "", "During handling of the above exception, another exception occurred:"]),
    ("tail", [HEADER, TOP, CODE, "ValueError: first", "", "more"]),
])
def test_blank_lines_keep_a_traceback_open_however_many(state, before):
    """A blank line is the traceback's own (held until text follows): it never lets the traceback go stale."""
    scanner = scanner_fed(*before, *[""] * 250)
    assert scanner.result()["pending"] == "traceback_open", state


def test_caret_lines_keep_a_traceback_open_however_many():
    scanner = scanner_fed(HEADER, TOP, *["    ^^^^^^"] * 250, CODE)
    assert scanner.result()["traceback"] == "\n".join([HEADER, TOP] + ["    ^^^^^^"] * 250 + [CODE])


def test_a_record_that_ends_a_traceback_is_read_on_its_own():
    result = scanner_fed(HEADER, INNER, CODE, "[2026-01-01 00:00:00] Load weight begin").result()
    assert [entry["phase"] for entry in result["phases"]] == ["process_started", "weights_loading"]


def test_torch_compile_s_user_code_after_more_of_the_message_is_still_the_message():
    lines = [HEADER, TOP, CODE, "torch._dynamo.exc.TorchRuntimeError: Failed running call_function", "",
             "Explanation: the graph broke", "", "from user code:",
             '   File "/srv/sglang/srt/models/llama.py", line 10, in forward', "    x = y"]
    result = scan_startup_log("\n".join(lines), ended=True)
    assert result["traceback"] == "\n".join(lines)
    assert result["error_message"] == "torch._dynamo.exc.TorchRuntimeError: Failed running call_function"


# ----------------------------------------------------------------------------------------------- pasted newest line first
KEY_ERROR = "KeyError: 'model.layers.78.mlp.gate_up_proj.input_scale'"
LOAD_WEIGHTS = 'File "/sgl-workspace/sglang/python/sglang/srt/models/llama.py", line 503, in load_weights'
SIGQUIT = "Received sigquit from a child process. It usually means the child failed."


@pytest.mark.parametrize("code_lines, cause", [(0, "unsupported_model_architecture"), (2, "unsupported_model_architecture"),
                                               (3, "unknown")])
def test_an_exception_up_to_three_lines_above_a_lone_frame_is_that_frame_s(code_lines, cause):
    """A paste newest line first: the exception, its code, then the frame that raised it (164's shape)."""
    lines = [SIGQUIT, KEY_ERROR] + ["param = params_dict[name]"] * code_lines + [LOAD_WEIGHTS]
    assert scan_startup_log("\n".join(lines), ended=True)["cause"] == cause


@pytest.mark.parametrize("pastes, cause", [(16, "unsupported_model_architecture"), (17, "unknown")])
def test_sixteen_pastes_newest_line_first_are_kept(pastes, cause):
    lines = []
    for number in range(pastes - 1):
        lines += ["ValueError: nothing %d" % number, "x = f()", 'File "/srv/a.py", line 1, in f', "[2025-04-04 06:24:51] INFO next"]
    lines += [KEY_ERROR, LOAD_WEIGHTS, "[2025-04-04 06:24:51] INFO next", SIGQUIT]
    assert scan_startup_log("\n".join(lines), ended=True)["cause"] == cause


# ----------------------------------------------------------------------------------------------- lines outside tracebacks
OOM_RECORD = "[2026-01-01 00:00:00 TP0] CUDA out of memory. Tried to allocate 20.00 GiB."
NCCL_RECORD = "[2026-01-01 00:00:00 TP0] NCCL error: unhandled system error"


@pytest.mark.parametrize("newer, cause", [(19, "gpu_out_of_memory"), (20, "nccl_error")])
def test_the_twenty_newest_decisive_lines_are_kept(newer, cause):
    """An OOM line outranks an NCCL error; once twenty newer decisive lines came, it is no longer evidence."""
    result = scanner_fed(OOM_RECORD, *[NCCL_RECORD] * newer, EXIT).result()
    assert result["cause"] == cause


def test_the_decisive_line_is_the_message_not_the_newest_notable_one():
    result = scanner_fed(OOM_RECORD, NCCL_RECORD, EXIT).result()
    assert result["cause"] == "gpu_out_of_memory"
    assert result["error_message"] == result["fatal_line"] == "CUDA out of memory. Tried to allocate 20.00 GiB."


def test_systemd_s_exit_after_ready_is_no_failure_s_line():
    result = scanner_fed("The server is fired up and ready to roll!", EXIT).result()
    assert (result["outcome"], result["systemd_line"]) == ("ready", None)
