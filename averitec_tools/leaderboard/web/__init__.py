"""The leaderboard web app (FastAPI + Jinja2, server-rendered; ``averitec leaderboard serve``)."""
