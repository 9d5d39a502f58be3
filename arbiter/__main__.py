from arbiter.cli import app

app(prog_name="arbiter")
