"""Issue 39 in a real headless Chromium: ties shown as ties, the resolution floor, the public
status page and a job the watchdog stopped (the fixture and helpers of
``tests/test_leaderboard_browser.py``; screenshots under ``$AVERITEC_TEST_ARTIFACTS/leaderboard/``).
"""

from __future__ import annotations

import datetime as dt

import pytest
import sqlalchemy as sa

from averitec_tools.leaderboard import models as m
from averitec_tools.leaderboard.processing import Scorer
from averitec_tools.leaderboard.store import Store
from averitec_tools.leaderboard.worker import process_one
from tests._leaderboard_helpers import competition_yaml, variant
from tests._leaderboard_server import running_server
from tests.test_leaderboard_browser import artifacts_dir, browser, submission_state  # noqa: F401 (the fixture)


def _board(tmp_path) -> tuple[str, dict[str, str], int]:
    """Two teams with the same predictions (an exact tie), a third worse one; a job stuck
    running for two hours (its worker alive but silent on it) and one waiting."""
    db = f"sqlite:///{tmp_path / 'lb.db'}"
    store = Store(db)
    store.init(competition_yaml(), where="c.yaml")
    tokens = {team: store.add_team(team) for team in ("blue", "red", "green")}
    for team, content in (("blue", variant(0)), ("red", variant(0)), ("green", variant(1, n_wrong=20))):
        store.submit(team=team, system=f"{team} system", phase="dev", content=content, file_name="p.json")
    scorer = Scorer(cache_dir=False, n_resamples=200)
    while process_one(store, scorer) is not None:
        pass
    stuck = store.submit(team="blue", system="stuck", phase="dev", content=variant(2), file_name="s.json").id
    store.claim(lease_seconds=24 * 3600, submission_id=stuck)
    with store.engine.begin() as conn:  # it started two hours ago (past the 600 s limit and the watchdog's 60 s)
        conn.execute(m.submissions.update().where(m.submissions.c.id == stuck)
                     .values(started_at=dt.datetime.now(dt.timezone.utc).replace(tzinfo=None) - dt.timedelta(hours=2)))
    store.submit(team="red", system="waiting", phase="dev", content=variant(3), file_name="w.json")
    store.close()
    return db, tokens, stuck


@pytest.mark.timeout(300)
def test_ties_floor_status_and_watchdog_in_chromium(tmp_path, browser) -> None:  # noqa: F811 (the fixture)
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    db, tokens, stuck = _board(tmp_path)
    shots = artifacts_dir()
    with running_server(db, workers=0) as (base, log):
        browser.get(base + "/phase/dev")
        rows = [[td.text for td in row.find_elements(By.TAG_NAME, "td")]
                for row in browser.find_elements(By.CSS_SELECTOR, "#leaderboard tbody tr")]
        assert [r[0] for r in rows[:2]] == ["=1", "=1"] and {r[2] for r in rows[:2]} == {"blue", "red"}
        assert [r[2] for r in rows[:2]] == ["blue", "red"]  # tied rows by name, not by upload time
        assert "tied" in rows[0][1] and rows[0][1] == rows[1][1]
        floor = browser.find_element(By.ID, "resolution-floor").text
        assert "Resolution floor: 0." in floor and "50 claims" in floor
        assert "floor:0." in browser.find_element(By.ID, "board-signature").text
        browser.save_screenshot(str(shots / "ties-desktop.png"))
        browser.set_window_size(390, 844)
        browser.save_screenshot(str(shots / "ties-phone.png"))
        browser.set_window_size(1280, 900)
        # the supervisor's watchdog (every 5 s, here without any worker) fails the stuck job
        engine = sa.create_engine(db)
        WebDriverWait(browser, 60, poll_frequency=1).until(lambda _: engine.connect().execute(
            sa.select(m.submissions.c.state).where(m.submissions.c.id == stuck)).scalar() == "failed")
        engine.dispose()
        browser.get(base + "/status")
        assert browser.find_element(By.ID, "queue-length").text == "1"
        assert browser.find_element(By.ID, "oldest-waiting").text.endswith(" s")
        assert browser.find_element(By.ID, "workers-alive").text == "0" and "no worker is taking jobs" in browser.page_source
        browser.save_screenshot(str(shots / "status.png"))
        browser.get(base + "/submit")
        browser.find_element(By.ID, "token").send_keys(tokens["blue"])
        browser.find_element(By.ID, "login").click()
        WebDriverWait(browser, 20).until(lambda d: d.find_elements(By.ID, "system"))
        browser.get(f"{base}/submission/{stuck}")
        assert submission_state(browser) == "failed"
        assert "watchdog: scoring ran" in browser.find_element(By.ID, "reason").text
        timeline = [[td.text for td in tr.find_elements(By.TAG_NAME, "td")] for tr in
                    browser.find_elements(By.CSS_SELECTOR, "#events tbody tr")]
        assert [t[1] for t in timeline] == ["pending", "running", "failed"]
        browser.save_screenshot(str(shots / "watchdog.png"))
        assert "watchdog: submission" in log()
    for name in ("ties-desktop", "ties-phone", "status", "watchdog"):
        assert (shots / f"{name}.png").read_bytes()[:4] == b"\x89PNG"
