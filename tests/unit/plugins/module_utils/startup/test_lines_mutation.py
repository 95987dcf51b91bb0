# -*- coding: utf-8 -*-
# Copyright: gpufleet.sglang contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""startup/lines' promises stated exactly (found by mutation testing): line endings only are stripped, relays are
stripped at most three deep, a terminal's breaks are joined at the width and no further (64 pieces, a progress bar's
next update, padded lines), and a paste's margin (a quote, a tab, four spaces) is learned and ended as documented."""

from __future__ import annotations

from ansible_collections.gpufleet.sglang.plugins.module_utils.startup.lines import (
    PasteMargin, Rewrapper, from_journal, parse_line, wrap_width)

T0 = 1764493315.25
RECORD = "[2025-11-30 09:02:11 TP0] Load weight begin. avail mem=46.92 GB"


# ------------------------------------------------------------------------------------------------ line endings
def test_parse_line_strips_the_line_ending_only_not_the_letters_before_it():
    line = parse_line("Capturing cuda graph for bs=XXX\r\n")
    assert (line.raw, line.msg, line.body) == ("Capturing cuda graph for bs=XXX",) * 3


def test_docker_json_log_field_loses_its_newline_only():
    line = parse_line('{"log":"Quantization method: MXFP4 XX\\n","stream":"stderr","time":"2025-04-05T00:01:19.2Z"}')
    assert line.msg == "Quantization method: MXFP4 XX"


def test_from_journal_strips_the_first_line_ending_only():
    line, = from_journal("dtype override MAX\r", 4300, "sglang", T0, "lab1")
    assert line.msg == "dtype override MAX"
    assert line.raw == "2025-11-30T09:01:55.250000+00:00 lab1 sglang[4300]: dtype override MAX"


def test_relays_are_stripped_at_most_three_deep():
    assert parse_line("[rank0]: [rank1]: [rank2]: boom").msg == "boom"
    assert parse_line("[rank0]: [rank1]: [rank2]: [rank3]: boom").msg == "[rank3]: boom"


# ------------------------------------------------------------------------------------------------ Rewrapper
def _push_all(wrapper, texts):
    out = []
    for text in texts:
        out.extend(wrapper.push(text))
    return out + wrapper.flush()


def test_three_pieces_of_the_width_and_a_short_rest_are_one_line():
    first, second, rest = "b" * 80, "c" * 80, "tail of the line"
    wrapper = Rewrapper(width=80)
    assert wrapper.push(first) == []
    assert wrapper.push(second) == []
    assert wrapper.push(rest) == [first + second + rest]
    assert wrapper.flush() == []


def test_a_line_is_joined_from_at_most_64_pieces():
    pieces = ["b" * 80] + ["c" * 80] * 64
    assert _push_all(Rewrapper(width=80), pieces) == ["b" * 80 + "c" * 80 * 63, "c" * 80]


def test_a_line_that_starts_with_the_held_lines_first_16_characters_is_its_next_update():
    held = "p" * 16 + "a" * 64
    update = "p" * 16 + "b" * 64  # the 17th character differs: still a progress bar's next update, not a rest
    wrapper = Rewrapper(width=80)
    assert wrapper.push(held) == []
    assert wrapper.push(update) == [held]
    assert wrapper.flush() == [update]


def test_a_line_padded_with_two_spaces_to_the_width_is_not_held():
    padded = "x" * 78 + "  "
    assert Rewrapper(width=80).push(padded) == [padded]


def test_push_removes_colour_codes():
    assert Rewrapper().push("\x1b[31mRuntimeError: boom\x1b[0m") == ["RuntimeError: boom"]
    assert Rewrapper().push("plain text") == ["plain text"]


def test_wrap_width_counts_what_the_terminal_shows_and_skips_padded_lines():
    assert wrap_width(["\x1b[1m" + "a" * 90 + "\x1b[0m"] * 3) == 90
    assert wrap_width(["a" * 98 + "  "] * 3) is None


# ------------------------------------------------------------------------------------------------ PasteMargin
def test_margin_from_the_whole_text_needs_five_lines_that_all_carry_it():
    quoted = ["> " + RECORD] * 5
    assert PasteMargin(quoted).margin == ">"
    assert PasteMargin(quoted[:4]).margin == ""
    assert PasteMargin(["> a", "", "> b", "   ", "> c", "> d", "> e"]).margin == ">"
    assert PasteMargin(["\tcode"] * 5).margin == "\t"
    assert PasteMargin(["    code"] * 5).margin == "    "
    assert PasteMargin([RECORD] * 6).margin == ""
    assert PasteMargin([RECORD] + quoted).margin == ""
    assert PasteMargin(["> a"] * 3 + ["\ta"] * 3).margin == ""


def test_a_known_margin_is_decided_and_ends_on_the_first_line_without_it():
    margin = PasteMargin(margin="    ")
    assert margin.strip("> a quoted line") == "> a quoted line"
    assert margin.margin == ""


def test_margin_learned_from_the_first_line_is_kept_and_ends_for_good():
    margin = PasteMargin()
    assert margin.strip("    " + RECORD) == RECORD
    assert margin.strip("      code()") == "  code()"
    assert margin.strip("> not a quote") == "> not a quote"
    assert [margin.strip(line) for line in ("    " + RECORD, "> b", "\tc", "XXXXd")] == ["    " + RECORD, "> b", "\tc", "XXXXd"]


def test_tab_margin_before_a_record():
    margin = PasteMargin()
    assert margin.strip("\t" + RECORD) == RECORD
    assert margin.margin == "\t"


def test_indented_code_of_a_frame_is_not_a_margin():
    for line in ('      File "x.py", line 1, in f', '\t\tFile "x.py", line 1, in f'):
        margin = PasteMargin()
        assert margin.strip(line) == line
        assert margin.margin == ""
