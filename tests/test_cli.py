import subprocess
import sys

from pipelines.cli import COMMANDS, build_parser, main


def test_help_lists_every_installed_command(capsys):
    parser = build_parser()
    help_text = parser.format_help()
    sub = next(a for a in parser._actions if a.dest == "command")
    assert set(sub.choices) <= {name for name, _ in COMMANDS}
    for name in sub.choices:
        assert name in help_text


def test_every_subcommand_has_help(capsys):
    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    for name in sub.choices:
        try:
            main([name, "--help"])
        except SystemExit as exc:
            assert exc.code == 0, name
        out = capsys.readouterr().out
        assert "usage:" in out


def test_console_script_runs():
    res = subprocess.run(
        [sys.executable, "-m", "pipelines.cli", "--help"], capture_output=True, text=True
    )
    assert res.returncode == 0
    assert "straggler" in res.stdout
