"""An embedded slot-based discrete-event cluster simulator, its policies and the bridge that
plugs a trained straggler predictor in as a placement policy."""

__all__: list[str] = []
