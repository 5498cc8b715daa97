"""MLflow "model from code" script: the pyfunc model of ``straggler train``.

``mlflow.pyfunc.log_model(python_model=<this file>)`` copies this script into the model
instead of pickling a Python object, so loading the model unpickles nothing; the model's data
is the non-executable predictor artifact (JSON + .npz).
"""

import mlflow.models

from pipelines._pyfunc import StragglerPyfunc

mlflow.models.set_model(StragglerPyfunc())
