"""Where an MLflow ``models:/`` or ``runs:/`` URI keeps a predictor: the artifact location
behind the URI in a tracking store, a moved run directory, the artifact directory in a
download. MLflow is imported only when a URI is resolved.

Public names
------------
find_artifact_dir
    The directory holding ``predictor.json`` in downloaded artifacts.
artifact_location
    The artifact URI behind a ``models:/`` or ``runs:/`` URI in a given store.
relocated_artifact
    Where artifacts recorded at a path are now, when their run directory was moved.

Examples
--------
>>> import tempfile
>>> from pathlib import Path
>>> root = Path(tempfile.mkdtemp())
>>> (root / "artifacts" / "predictor").mkdir(parents=True)
>>> _ = (root / "artifacts" / "predictor" / "predictor.json").write_text("{}")
>>> find_artifact_dir(root) == root / "artifacts" / "predictor"
True
>>> relocated_artifact("s3://bucket/model", "sqlite:///runs/mlflow.db") is None
True
"""

from __future__ import annotations

from pathlib import Path

from ._predictor_format import META_FILE, ArtifactError


def find_artifact_dir(root: Path) -> Path:
    for cand in (root, root / "predictor", root / "artifacts" / "predictor"):
        if (cand / META_FILE).is_file():
            return cand
    found = sorted(p.parent for p in root.rglob(META_FILE))
    if len(found) == 1:
        return found[0]
    if not found:
        raise FileNotFoundError(
            f"no {META_FILE} under the downloaded artifacts at {root} (expected a "
            f"'predictor/' directory in the MLflow model's artifacts)"
        )
    raise ArtifactError(f"several predictor artifacts under {root}: {[str(p) for p in found]}")


def artifact_location(uri: str, store_uri: str) -> str:
    """The artifact URI (``file:///...``, ``s3://...``) behind a ``models:/NAME@ALIAS``,
    ``models:/NAME/VERSION`` or ``runs:/RUN/PATH`` URI, looked up in ``store_uri`` (tracking
    and registry alike: MLflow's own download ignores a registry passed to it and opens the
    default one, creating ``./mlflow.db``)."""
    from mlflow import MlflowClient

    client = MlflowClient(store_uri, registry_uri=store_uri)
    if uri.startswith("models:/"):
        ref = uri[len("models:/") :]
        name, sep, alias = ref.partition("@")
        if sep:
            version = client.get_model_version_by_alias(name, alias).version
        else:
            name, _, version = ref.partition("/")
        return client.get_model_version_download_uri(name, version)
    if uri.startswith("runs:/"):
        run_id, _, sub = uri[len("runs:/") :].partition("/")
        return client.get_run(run_id).info.artifact_uri.rstrip("/") + "/" + sub
    return uri  # mlflow-artifacts:/ and the like: MLflow resolves those itself


def relocated_artifact(where: str, store_uri: str) -> Path | None:
    """Where artifacts recorded at ``where`` are now, when their run directory was moved.

    The store (``sqlite:///DIR/mlflow.db``, as ``straggler train`` writes it) records absolute
    artifact paths under ``OLD/mlartifacts/``. When that path no longer exists and
    ``DIR/mlartifacts/`` holds the same relative path, that is the model. ``None`` otherwise
    (not a SQLite store, not a file artifact, or nothing there).
    """
    import re
    from urllib.parse import unquote, urlparse

    m = re.match(r"^sqlite:///(.+)$", store_uri)
    parsed = urlparse(where)
    if not m or parsed.scheme not in ("", "file"):
        return None
    old = unquote(parsed.path)
    if Path(old).exists() or "/mlartifacts/" not in old:
        return None
    candidate = Path(m.group(1)).parent / "mlartifacts" / old.split("/mlartifacts/", 1)[1]
    return candidate if candidate.exists() else None
