"""A "Revert N files" card whose turn ``/rewind`` reverted gives way to its
static form: no live button offering what is already done; a card whose turn
was not reverted stays live. Real session, real checkpoints, the widget
drawn on a stand-in cell."""

from __future__ import annotations

from pathlib import Path

import pytest

from magics._live.parts import WidgetPart
from magics._live.revert_card import RevertCard, settle_reverted, track
from mewcode_kernel.core.commands import run_command
from mewcode_kernel.testing import ScriptedModel
from tests._frontend import FakeCell
from tests.test_checkpoints import make_session, turn, write


@pytest.mark.usefixtures("comm_log")
async def test_a_card_of_a_rewound_turn_settles_and_the_others_stay(tmp_path: Path) -> None:
    root = tmp_path / "project"
    root.mkdir()
    model = ScriptedModel()
    session = make_session(root, model)
    try:
        cell = FakeCell()
        cards = []
        for name in ("a.txt", "b.txt"):
            await turn(session, model, write(name, "x"))
            revert = session.turn_revert()
            assert revert is not None
            card = RevertCard(revert)
            part = WidgetPart(cell, card.widget, card.static_bundle, kind="revert")
            part.paint()
            track(card, part)
            cards.append((card, part))
        assert settle_reverted() == 0  # nothing reverted yet: both stay live
        done = await run_command(session, "/rewind")  # the last turn (b.txt)
        assert not done.error and not (root / "b.txt").exists()
        assert settle_reverted() == 1
        (first, first_part), (last, last_part) = cards
        assert last.reverted() and not first.reverted()
        assert last_part.final and not first_part.final
        assert settle_reverted() == 0  # once only
    finally:
        await session.aclose()
