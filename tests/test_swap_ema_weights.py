"""`keras.callbacks.SwapEMAWeights` against tf.keras: the same fit (SGD with
`use_ema`), the same validation losses (computed with the moving averages),
weights and averages after `fit`, `evaluate` and `predict`, and the same
errors."""

import numpy as np
import pytest

import jaxtape

RNG = np.random.default_rng(7)
X = RNG.normal(size=(32, 3)).astype(np.float32)
Y = RNG.normal(size=(32, 2)).astype(np.float32)


def _model(m, weights=None):
    model = m.keras.Sequential(
        [m.keras.Input((3,)), m.keras.layers.Dense(2, name="d")], name="net"
    )
    if weights is not None:
        model.set_weights(weights)
    opt = m.keras.optimizers.SGD(0.1, use_ema=True, ema_momentum=0.5)
    model.compile(optimizer=opt, loss="mse")
    return model


def _averages(m, model):
    opt = model.optimizer
    if m is jaxtape:
        return [opt._averages[id(v)].numpy() for v in model.trainable_weights]
    return [v.numpy() for v in opt._model_variables_moving_average]


@pytest.mark.parametrize("swap_on_epoch", [False, True])
def test_fit_evaluate_predict_match_tf_keras(tf, swap_on_epoch):
    weights = _model(tf).get_weights()
    runs = {}
    for m in (tf, jaxtape):
        model = _model(m, weights)
        seen = []  # what the callbacks after it see at each epoch's end
        record = m.keras.callbacks.LambdaCallback(
            on_epoch_end=lambda e, logs, model=model: seen.append(model.get_weights())
        )
        swap = m.keras.callbacks.SwapEMAWeights(swap_on_epoch=swap_on_epoch)
        history = model.fit(
            X, Y, batch_size=8, epochs=3, shuffle=False, verbose=0,
            validation_data=(X, Y), callbacks=[swap, record],
        )  # fmt: skip
        after_fit = (model.get_weights(), _averages(m, model))
        loss = model.evaluate(X, Y, verbose=0, callbacks=[swap])
        after_eval = model.get_weights()
        model.predict(X, verbose=0, callbacks=[swap])
        after_predict = model.get_weights()  # (Keras leaves the averages in)
        runs[m] = (history.history, seen, after_fit, loss, after_eval, after_predict)
    (h_t, seen_t, fit_t, loss_t, ev_t, pr_t) = runs[tf]
    (h_j, seen_j, fit_j, loss_j, ev_j, pr_j) = runs[jaxtape]
    assert h_j.keys() == h_t.keys()
    for key in h_t:
        np.testing.assert_allclose(h_j[key], h_t[key], rtol=1e-5, err_msg=key)
    for a, b in zip(seen_j, seen_t, strict=True):
        for x, y in zip(a, b, strict=True):
            np.testing.assert_allclose(x, y, rtol=1e-5, atol=1e-6)
    for got, want in [(fit_j[0], fit_t[0]), (fit_j[1], fit_t[1]), (ev_j, ev_t),
                      (pr_j, pr_t)]:  # fmt: skip
        for x, y in zip(got, want, strict=True):
            np.testing.assert_allclose(x, y, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(loss_j, loss_t, rtol=1e-5)


def test_without_ema_raises_as_tf_keras(tf):
    messages = []
    for m in (tf, jaxtape):
        model = m.keras.Sequential([m.keras.Input((3,)), m.keras.layers.Dense(2)])
        model.compile(optimizer=m.keras.optimizers.SGD(0.1), loss="mse")
        model.fit(X, Y, epochs=1, verbose=0)
        with pytest.raises(ValueError) as e:
            model.evaluate(
                X, Y, verbose=0, callbacks=[m.keras.callbacks.SwapEMAWeights()]
            )
        messages.append(str(e.value))
    assert messages[0] == messages[1]
