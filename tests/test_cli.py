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


def _parse_with_config(argv, tmp_path, text):
    from pipelines._config import apply_config

    f = tmp_path / "c.toml"
    f.write_text(text)
    parser = build_parser()
    argv = [*argv, "--config", str(f)]
    apply_config(parser, argv)
    return parser.parse_args(argv)


def test_every_subcommand_takes_config():
    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    for name, sp in sub.choices.items():
        if sp._subparsers is not None:  # `data fetch`, `data check`: on the nested commands
            for sub_name, nested in sp._subparsers._group_actions[0].choices.items():
                assert any("--config" in a.option_strings for a in nested._actions), sub_name
            continue
        assert any("--config" in a.option_strings for a in sp._actions), name


def test_config_on_off_list_and_repeatable_flags_parse_as_the_flags(tmp_path):
    """``--x/--no-x`` switches, list flags given one value, and repeatable ``--param`` give
    the namespace the same flags on the command line give."""
    base = ["simulate", "--out", "O"]
    cases = [
        ("stream = false\n", ["--no-stream"]),
        ("stream = true\n", ["--stream"]),
        ("no-stream = true\n", ["--no-stream"]),
        ('workload = "FB2009"\n', ["--workload", "FB2009"]),
        ('workload = ["SYN", "FB2009"]\n', ["--workload", "SYN", "FB2009"]),
        ('param = "quantile=0.9"\n', ["--param", "quantile=0.9"]),
        ('param = ["quantile=0.9", "cap=2"]\n', ["--param", "quantile=0.9", "--param", "cap=2"]),
    ]
    for text, flags in cases:
        got = vars(_parse_with_config(base, tmp_path, text))
        want = vars(build_parser().parse_args([*base, *flags]))
        got.pop("config"), want.pop("config")
        assert got == want, text


def test_config_shared_keys_nested_commands_and_exclusive_flags(tmp_path, capsys):
    """Top-level keys another command has are skipped (one file serves several commands); a
    typo at top level is still an error; ``data fetch`` takes --config; --scheduler on the
    command line drops a --workers from the file."""
    text = 'table = 1\ntraces = "T"\nout = "O"\nworkers = 2\n'
    args = _parse_with_config(["compare", "--scheduler", "tcp://h:1"], tmp_path, text)
    assert args.scheduler == "tcp://h:1" and args.workers is None
    assert not hasattr(args, "table")
    args = _parse_with_config(["data", "fetch"], tmp_path, "jobs = 3\n[data.fetch]\nquiet = true\n")
    assert args.jobs == 3 and args.quiet is True
    f = tmp_path / "typo.toml"
    f.write_text('traces = "T"\nout = "O"\ntabel = 1\n')
    assert main(["evaluate", "--config", str(f)]) == 2
    assert "unknown key 'tabel'" in capsys.readouterr().err


def test_config_sets_defaults_and_flags_win(tmp_path):
    text = 'traces = "T"\nout = "O"\ntable = 2\npairs = 5\nmin-rows = 10\nfractions = [1, 5]\n'
    args = _parse_with_config(["evaluate"], tmp_path, text)
    assert (args.traces, args.out, args.table, args.pairs, args.min_rows) == ("T", "O", 2, 5, 10)
    # a TOML array for a comma-separated flag: as the flag would give it
    flag = build_parser().parse_args(
        ["evaluate", "--traces", "T", "--out", "O", "--table", "2", "--fractions", "1,5"]
    )
    assert args.fractions == flag.fractions
    args = _parse_with_config(["evaluate", "--pairs", "7", "--table", "1"], tmp_path, text)
    assert args.pairs == 7 and args.table == 1  # the command line wins


def test_config_switches_sections_and_the_same_keys_as_flags(tmp_path):
    text = 'variant = "f0"\n[train]\nno-register = true\nmetric = "pr_auc"\n[evaluate]\npairs = 3\n'
    args = _parse_with_config(["train", "--traces", "T", "--out", "O"], tmp_path, text)
    assert args.no_register is True and args.metric == "pr_auc" and args.variant == "f0"
    ref = build_parser().parse_args(
        [
            "train",
            "--traces",
            "T",
            "--out",
            "O",
            "--variant",
            "f0",
            "--no-register",
            "--metric",
            "pr_auc",
        ]
    )
    assert {k: v for k, v in vars(args).items() if k != "config"} == {
        k: v for k, v in vars(ref).items() if k != "config"
    }


def test_config_unknown_key_bad_value_and_missing_file(tmp_path, capsys):
    f = tmp_path / "bad.toml"
    f.write_text("pairs = 5\nno_such_flag = 1\n")
    assert main(["evaluate", "--config", str(f)]) == 2
    err = capsys.readouterr().err
    assert "unknown key 'no_such_flag'" in err and str(f) in err
    f.write_text('table = 3\ntraces = "T"\nout = "O"\n')
    assert main(["evaluate", "--config", str(f)]) == 2
    assert "key 'table' value 3 is not one of [1, 2]" in capsys.readouterr().err
    f.write_text("pairs = [unclosed\n")
    assert main(["evaluate", "--config", str(f)]) == 2
    assert "not a TOML file" in capsys.readouterr().err
    assert main(["evaluate", "--config", str(tmp_path / "none.toml")]) == 2
    assert "no file at" in capsys.readouterr().err
