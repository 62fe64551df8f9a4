"""The web app in a real headless Chromium (Debian's chromium + chromium-driver, selenium).

Sign in with the team token, upload through the form (a real browser sends the Origin
header the server checks), watch the submission page refresh until it is finished, see the
system ranked; a team with a 100-character name still leaves the scores on screen. Screenshots are kept in ``$AVERITEC_TEST_ARTIFACTS`` (default
``test-artifacts/``) under ``leaderboard/``. Without Chromium the test skips, except in
CI, where it fails.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path

import pytest
from conftest import skip_or_fail

from averitec_tools.leaderboard.processing import Scorer
from averitec_tools.leaderboard.store import Store
from averitec_tools.leaderboard.worker import process_one
from tests._leaderboard_helpers import DEMO_GOLD, REPO, competition_yaml, variant
from tests._leaderboard_server import running_server

CHROME_FLAGS = (
    "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--no-first-run", "--window-size=1280,900",
)


def submission_state(browser, *, until: tuple[str, ...] = ()) -> str:  # type: ignore[no-untyped-def]
    """The submission page's state (waiting up to 180 s for one of ``until`` when given).

    The page reloads itself while the submission is pending, so an element found just before a
    reload goes stale; it is looked up again rather than failing on a timing race.
    """
    from selenium.common.exceptions import NoSuchElementException, StaleElementReferenceException
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    def read(d):  # type: ignore[no-untyped-def]
        text = d.find_element(By.ID, "state").text
        return text if not until or text in until else False

    wait = WebDriverWait(browser, 180 if until else 20, poll_frequency=0.5,
                         ignored_exceptions=(StaleElementReferenceException, NoSuchElementException))
    return str(wait.until(read))


def artifacts_dir() -> Path:
    base = Path(os.environ.get("AVERITEC_TEST_ARTIFACTS") or REPO / "test-artifacts")
    path = base / "leaderboard"
    path.mkdir(parents=True, exist_ok=True)
    return path


@pytest.fixture
def browser(monkeypatch: pytest.MonkeyPatch):
    chromium = next(filter(None, map(shutil.which, ("chromium", "chromium-browser", "google-chrome"))), None)
    driver_path = shutil.which("chromedriver")
    if not chromium or not driver_path:
        skip_or_fail("chromium and chromedriver not found (apt-get install chromium chromium-driver)")
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        skip_or_fail("selenium not installed (pip install 'averitec-tools[leaderboard]')")
    monkeypatch.setenv("SE_OFFLINE", "1")  # never let Selenium Manager download a browser or driver
    profile = tempfile.mkdtemp(prefix="averitec-chromium-")
    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for flag in (*CHROME_FLAGS, f"--user-data-dir={profile}"):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(executable_path=driver_path), options=options)
    driver.set_page_load_timeout(60)
    try:
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)


@pytest.mark.timeout(300)
def test_upload_in_browser_then_ranked(tmp_path, browser) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select, WebDriverWait

    db = f"sqlite:///{tmp_path / 'lb.db'}"
    store = Store(db)
    store.init(competition_yaml(), where="c.yaml")
    token = store.add_team("blue")
    store.add_team("<b>red</b>")
    store.submit(team="<b>red</b>", system="<script>alert(1)</script>", phase="dev", content=variant(1, n_wrong=15),
                 file_name="r.json", meta={"model": "bm25 + nli", "open_weights": "yes"})
    long_name = "an-extraordinarily-long-team-name-without-any-spaces-" + "x" * 46
    store.add_team(long_name)
    store.submit(team=long_name, system="y" * 150, phase="dev", content=variant(2, n_wrong=25), file_name="l.json")
    process_one(store, Scorer(n_resamples=200))
    upload = tmp_path / "predictions.json"
    upload.write_bytes(variant(0))
    shots = artifacts_dir()
    with running_server(db, workers=1) as (base, _):
        browser.get(base + "/submit")
        browser.find_element(By.ID, "token").send_keys(token)
        browser.find_element(By.ID, "login").click()
        WebDriverWait(browser, 20).until(lambda d: d.find_elements(By.ID, "system"))
        browser.find_element(By.ID, "system").send_keys("baseline (BLOOM QA + BERT)")
        Select(browser.find_element(By.ID, "phase")).select_by_value("dev")
        browser.find_element(By.ID, "file").send_keys(str(upload))
        browser.find_element(By.ID, "meta-model").send_keys("bloom-7b1")
        browser.find_element(By.ID, "meta-open_weights").send_keys("yes")
        browser.save_screenshot(str(shots / "submit-form.png"))
        browser.find_element(By.ID, "send").click()
        WebDriverWait(browser, 20).until(lambda d: "/submission/" in d.current_url)
        assert submission_state(browser) in ("pending", "running", "finished")
        assert submission_state(browser, until=("finished", "failed")) == "finished"
        browser.save_screenshot(str(shots / "submission.png"))
        browser.get(base + "/phase/dev")
        rows = browser.find_elements(By.CSS_SELECTOR, "#leaderboard tbody tr")
        cells = [[td.text for td in row.find_elements(By.TAG_NAME, "td")] for row in rows]
        assert cells[0][0] == "1" and cells[0][1].startswith("1") and cells[0][2:4] == ["blue", "baseline (BLOOM QA + BERT)"]
        assert cells[1][2:4] == ["<b>red</b>", "<script>alert(1)</script>"]  # shown as text
        assert cells[2][2] == long_name
        width = browser.execute_script("return document.documentElement.clientWidth")
        for score in browser.find_elements(By.CSS_SELECTOR, "#leaderboard td.primary"):
            assert score.rect["x"] + score.rect["width"] <= width  # long names wrap, the scores stay on screen
        browser.save_screenshot(str(shots / "leaderboard.png"))
        browser.get(base + "/team/blue")
        assert "left in total" in browser.page_source
        browser.save_screenshot(str(shots / "team.png"))
    for name in ("submit-form", "submission", "leaderboard", "team"):
        assert (shots / f"{name}.png").read_bytes()[:4] == b"\x89PNG"


@pytest.mark.timeout(300)
def test_rank_intervals_on_the_board_at_desktop_and_phone_widths(tmp_path, browser) -> None:
    """The demo competition with the 2024 baseline and two perturbed submissions: every row
    shows its rank interval and P(first) (the values of ``tests/test_leaderboard_rank_intervals.py``'s
    independent computation are checked there; here: shown, readable, in the right column,
    at 1280 and at 390 pixels wide), and the board's signature under the table."""
    from selenium.webdriver.common.by import By

    from averitec_tools.leaderboard.export import entry_dict
    from averitec_tools.leaderboard.ranking import rank_store
    from tests.test_leaderboard_rank_intervals import _demo_board

    store, db = _demo_board(tmp_path)
    rows = [entry_dict(e, disclosure=()) for e in rank_store(store, "demo")]
    shots = artifacts_dir()
    with running_server(db) as (base, _):
        for width, name in ((1280, "desktop"), (390, "phone")):
            browser.set_window_size(width, 900)
            browser.get(base + "/phase/demo")
            headers = [th.text for th in browser.find_elements(By.CSS_SELECTOR, "#leaderboard thead th")]
            col, p_col = headers.index("Rank interval"), headers.index("P(first)")
            shown = [[td.get_attribute("textContent").strip() for td in tr.find_elements(By.TAG_NAME, "td")]
                     for tr in browser.find_elements(By.CSS_SELECTOR, "#leaderboard tbody tr")]
            assert [(r[col], r[p_col]) for r in shown] == [
                (f"{r['rank_interval'][0]}–{r['rank_interval'][1]}", f"{r['p_first']:.3f}") for r in rows]
            assert "B:1000|seed:0" in browser.find_element(By.ID, "board-signature").text
            cell = browser.find_element(By.CSS_SELECTOR, "#leaderboard td.rank-interval")
            browser.execute_script("arguments[0].scrollIntoView({block: 'center', inline: 'center'})", cell)
            right = browser.execute_script("return document.documentElement.clientWidth")
            assert cell.rect["x"] >= 0 and cell.rect["x"] + cell.rect["width"] <= right  # reachable by scrolling the table
            browser.save_screenshot(str(shots / f"rank-intervals-{name}.png"))
    for name in ("desktop", "phone"):
        assert (shots / f"rank-intervals-{name}.png").read_bytes()[:4] == b"\x89PNG"


@pytest.mark.timeout(300)
def test_claim_viewer_at_desktop_and_phone_widths(tmp_path, browser) -> None:
    """From a board row to a claim: the submission page links to its claim list, the list
    is searchable by claim id, the claim page shows the Hu-METEOR matrix with the
    Hungarian assignment marked once the phase is revealed; on a private split a team
    cannot open a claim of the hidden part before the reveal."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    db = f"sqlite:///{tmp_path / 'lb.db'}"
    store = Store(db)
    store.init(competition_yaml(visibility="private", split={"public_fraction": 0.5, "seed": 13}), where="c.yaml")
    token = store.add_team("blue")
    store.submit(team="blue", system="baseline", phase="dev", content=variant(0), file_name="p.json")
    process_one(store, Scorer(cache_dir=False, n_resamples=50))
    from averitec_tools.leaderboard.ranking import claim_mask

    public = [i for i, keep in enumerate(claim_mask(store.competition().phase("dev"), 50, revealed=False)) if keep]
    private = [i for i in range(50) if i not in public]
    shots = artifacts_dir()
    with running_server(db) as (base, _):
        browser.set_window_size(1280, 900)
        browser.get(base + "/submit")  # the team: per-claim scores are its own until the gold is shown (issue 39)
        browser.find_element(By.ID, "token").send_keys(token)
        browser.find_element(By.ID, "login").click()
        WebDriverWait(browser, 20).until(lambda d: d.find_elements(By.ID, "system"))
        browser.get(base + f"/submission/1/claim/{private[0]}")
        assert f"no visible claim '{private[0]}'" in browser.find_element(By.TAG_NAME, "main").text
        store.reveal("dev")  # now the private claims count (and gold is shown)
        browser.get(base + "/submission/1")
        browser.find_element(By.ID, "claims-link").click()
        browser.find_element(By.ID, "q").send_keys(str(private[0]))
        browser.find_element(By.ID, "search").click()
        WebDriverWait(browser, 20).until(lambda d: "q=" in d.current_url)  # the search page, not the list before it
        links = browser.find_elements(By.CSS_SELECTOR, "#claims tbody a")
        assert [a.text for a in links] == [str(private[0])]
        links[0].click()
        marked = browser.find_elements(By.CSS_SELECTOR, "#matrix td.assigned")
        assert marked and browser.find_element(By.ID, "gold-label").text
        assert all(cell.value_of_css_property("font-weight") == "700" for cell in marked)
        browser.execute_script("document.getElementById('gold-qa').scrollIntoView()")
        browser.save_screenshot(str(shots / "claim-desktop.png"))
        browser.set_window_size(390, 900)
        browser.refresh()
        width = browser.execute_script("return document.documentElement.clientWidth")
        assert browser.execute_script("return document.documentElement.scrollWidth") <= width  # nothing wider than a phone
        text = browser.find_element(By.ID, "claim-text")
        assert text.rect["x"] + text.rect["width"] <= width  # the claim wraps on a phone
        browser.execute_script("document.getElementById('matrix-heading').scrollIntoView()")
        browser.save_screenshot(str(shots / "claim-phone.png"))
    for name in ("desktop", "phone"):
        assert (shots / f"claim-{name}.png").read_bytes()[:4] == b"\x89PNG"


@pytest.mark.timeout(420)
def test_audit_flags_declaration_and_unscored_at_desktop_and_phone_widths(tmp_path, browser) -> None:
    """Issue 28 items 3-4 in a real browser: a team uploads through the form with its
    declaration (HTML in it, shown as text; a tampered yes/no value is one message and
    nothing stored); the worker audits the evidence and the board row is flagged, with its
    counts linking to the audit page; on a private split the audit shows no claim of the
    hidden half before the reveal; a judge phase shows per row the claims left unscored and
    why, and its signature names the mode. Screenshots: the flagged row at 1280 and 390 px."""
    from _judge_server import running
    from selenium.common.exceptions import StaleElementReferenceException
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select, WebDriverWait

    from averitec_tools.leaderboard.ranking import claim_mask
    from tests.test_leaderboard_trust import (
        SPLIT,
        flagged_predictions,
        judge_competition,
        judge_fixtures,
    )

    db = f"sqlite:///{tmp_path / 'lb.db'}"
    store = Store(db)
    board = {"gold": str(DEMO_GOLD), "profiles": ["averitec2024"], "primary_metric": "averitec_score@0.25",
             "columns": ["averitec_score@0.25", "label_accuracy"]}
    with running(judge_fixtures(), tmp_path) as (judge_url, _):
        spec = json.loads(judge_competition(judge_url, tmp_path / "judge-cache"))
        spec["phases"] = [{"name": "board", **board, "title": "Audit flags"},
                          {"name": "split", **board, "visibility": "private", "split": SPLIT},
                          {**spec["phases"][0], "name": "judge"}]
        store.init(json.dumps(spec), where="c.yaml")
        token = store.add_team("blue")
        store.add_team("green")
        scorer = Scorer(cache_dir=False, n_resamples=50)
        for team, phase, content in (("green", "board", variant(3, n_wrong=10)), ("blue", "split", flagged_predictions()),
                                     ("blue", "judge", variant(0))):
            sid = store.submit(team=team, system=f"{team}-{phase}", phase=phase, content=content, file_name="p.json",
                               declaration={"training_data": "AVeriTeC train", "dev_claims_used": "no"}).id
            process_one(store, scorer, submission_id=sid)
            assert store.submission(sid)["state"] == "finished"
    upload = tmp_path / "leaky.json"
    upload.write_bytes(flagged_predictions())
    shots = artifacts_dir()
    with running_server(db, workers=1) as (base, _):
        browser.set_window_size(1280, 900)
        browser.get(base + "/submit")
        browser.find_element(By.ID, "token").send_keys(token)
        browser.find_element(By.ID, "login").click()
        WebDriverWait(browser, 20).until(lambda d: d.find_elements(By.ID, "system"))

        def fill(dev_claims: str) -> None:
            browser.find_element(By.ID, "system").send_keys("leaky retriever")
            Select(browser.find_element(By.ID, "phase")).select_by_value("board")
            browser.find_element(By.ID, "file").send_keys(str(upload))
            browser.find_element(By.ID, "training-data").send_keys("<b>AVeriTeC train</b> + the web")
            browser.execute_script(f"document.querySelector('#dev-claims-used option[value=yes]').value = {dev_claims!r}")
            Select(browser.find_element(By.ID, "dev-claims-used")).select_by_index(2)

        fill("maybe")  # a tampered form: one message, nothing stored
        n_before = len(store.submissions())
        browser.find_element(By.ID, "send").click()
        # the click returns before the answer page replaces the form (reading the old page's
        # <main> then is a stale element): wait for the message, as for any navigation
        WebDriverWait(browser, 20, ignored_exceptions=(StaleElementReferenceException,)).until(
            lambda d: "field 'dev_claims_used' must be 'yes' or 'no'" in d.find_element(By.TAG_NAME, "main").text)
        assert len(store.submissions()) == n_before
        browser.get(base + "/submit")
        fill("yes")
        browser.find_element(By.ID, "send").click()
        WebDriverWait(browser, 20).until(lambda d: "/submission/" in d.current_url)
        assert submission_state(browser, until=("finished", "failed")) == "finished"
        assert browser.find_element(By.ID, "declared-training").text == "<b>AVeriTeC train</b> + the web"
        assert "1 the claim's own fact-check" in browser.find_element(By.ID, "audit-summary").text
        for width, name in ((1280, "desktop"), (390, "phone")):
            browser.set_window_size(width, 900)
            browser.get(base + "/phase/board")
            headers = [th.text for th in browser.find_elements(By.CSS_SELECTOR, "#leaderboard thead th")]
            rows = browser.find_elements(By.CSS_SELECTOR, "#leaderboard tbody tr")
            cells = {tr.find_elements(By.TAG_NAME, "td")[3].text: tr for tr in rows}
            flagged = cells["leaky retriever"].find_element(By.CSS_SELECTOR, "td.audit")
            assert "flagged" in flagged.get_attribute("class")
            assert "flagged" not in cells["green-board"].find_element(By.CSS_SELECTOR, "td.audit").get_attribute("class")  # sources only
            texts = [td.get_attribute("textContent").strip() for td in cells["leaky retriever"].find_elements(By.TAG_NAME, "td")]
            assert texts[headers.index("Training data (declared)")] == "<b>AVeriTeC train</b> + the web"
            assert texts[headers.index("Dev claims used")] == "yes"
            browser.execute_script("arguments[0].scrollIntoView({block: 'center', inline: 'center'})", flagged)
            right = browser.execute_script("return document.documentElement.clientWidth")
            assert flagged.rect["x"] >= 0 and flagged.rect["x"] + flagged.rect["width"] <= right
            browser.save_screenshot(str(shots / f"flagged-row-{name}.png"))
        browser.set_window_size(1280, 900)
        flagged = browser.find_element(By.CSS_SELECTOR, "#leaderboard td.audit.flagged a")
        counts = [int(x) for x in flagged.text.split(" · ")]
        flagged.click()
        shown = [int(browser.find_element(By.ID, f"count-{r}").text)
                 for r in ("published_after_claim", "fact_checker_source", "own_fact_check_article")]
        assert shown == counts and counts[2] == 1
        # The private split: the team's own audit page lists no claim of the hidden half.
        split_id = next(r["id"] for r in store.submissions(phase="split"))
        public = claim_mask(store.competition().phase("split"), 50, revealed=False)
        browser.get(base + f"/submission/{split_id}/audit")
        listed = [int(td.text) for td in browser.find_elements(By.CSS_SELECTOR, "table.audit-rows tbody tr td:first-child")]
        assert listed and all(public[i] for i in listed)
        # The judge phase: the judge could not be reached for two claims (the unparseable reply
        # scores 0): the row is incomplete, listed apart and unranked; the mode in the signature.
        browser.get(base + "/phase/judge")
        headers = [th.text for th in browser.find_elements(By.CSS_SELECTOR, "#unranked-rows thead th")]
        row = browser.find_element(By.CSS_SELECTOR, "#unranked-rows tbody tr").find_elements(By.TAG_NAME, "td")
        assert row[0].text == "incomplete" and row[headers.index("Unscored")].text == "2"
        assert not browser.find_elements(By.CSS_SELECTOR, "#leaderboard tbody tr")
        assert "judge-failures:unscored" in browser.find_element(By.ID, "board-signature").text
        browser.save_screenshot(str(shots / "unscored.png"))
    for name in ("flagged-row-desktop", "flagged-row-phone", "unscored"):
        assert (shots / f"{name}.png").read_bytes()[:4] == b"\x89PNG"
