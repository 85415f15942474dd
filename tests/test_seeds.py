"""Every code snippet of ../shared/seeds that uses the core API, run as written.

Only `import tensorflow as tf` became `import jaxtape as tf`. Seed 003's
snippets lost their indentation and two function bodies (`grad`, `g`) in the
scrape; they are restored as in the TF 1.x eager tutorial they come from.
"""

import math

import numpy as np
import pytest

import jaxtape as tf


def test_seed_001_gradient_of_sum_squared():
    x = tf.ones((2, 2))

    with tf.GradientTape() as t:
        t.watch(x)
        y = tf.reduce_sum(x)
        z = tf.multiply(y, y)

    # Derivative of z with respect to the original input tensor x
    dz_dx = t.gradient(z, x)
    for i in [0, 1]:
        for j in [0, 1]:
            assert dz_dx[i][j].numpy() == 8.0
    assert repr(x) == ("<jaxtape.Tensor: shape=(2, 2), dtype=float32, numpy=\n"
                       "array([[1., 1.],\n       [1., 1.]], dtype=float32)>")
    assert repr(z) == "<jaxtape.Tensor: shape=(), dtype=float32, numpy=16.0>"


def test_seed_001_gradient_wrt_intermediate():
    x = tf.ones((2, 2))

    with tf.GradientTape() as t:
        t.watch(x)
        y = tf.reduce_sum(x)
        z = tf.multiply(y, y)

    # Use the tape to compute the derivative of z with respect to the
    # intermediate value y.
    dz_dy = t.gradient(z, y)
    assert dz_dy.numpy() == 8.0


def test_seed_001_persistent_tape():
    x = tf.constant(3.0)
    with tf.GradientTape(persistent=True) as t:
        t.watch(x)
        y = x * x
        z = y * y
    dz_dx = t.gradient(z, x)  # 108.0 (4*x^3 at x = 3)
    dy_dx = t.gradient(y, x)  # 6.0
    del t  # Drop the reference to the tape
    assert dz_dx.numpy() == 108.0
    assert dy_dx.numpy() == 6.0


def test_seed_001_control_flow():
    def f(x, y):
        output = 1.0
        for i in range(y):
            if i > 1 and i < 5:
                output = tf.multiply(output, x)
        return output

    def grad(x, y):
        with tf.GradientTape() as t:
            t.watch(x)
            out = f(x, y)
        return t.gradient(out, x)

    x = tf.convert_to_tensor(2.0)

    assert grad(x, 6).numpy() == 12.0
    assert grad(x, 5).numpy() == 12.0
    assert grad(x, 4).numpy() == 4.0


def test_seed_001_higher_order():
    x = tf.Variable(1.0)  # Create a Tensorflow variable initialized to 1.0

    with tf.GradientTape() as t:
        with tf.GradientTape() as t2:
            y = x * x * x
        # Compute the gradient inside the 't' context manager
        # which means the gradient computation is differentiable as well.
        dy_dx = t2.gradient(y, x)
    d2y_dx2 = t.gradient(dy_dx, x)

    assert dy_dx.numpy() == 3.0
    assert d2y_dx2.numpy() == 6.0


def test_seed_002_gradient_inside_context():
    x = tf.constant(3.0)

    with tf.GradientTape() as g:
        g.watch(x)
        y = x * x
        dy_dx = g.gradient(y, x)  # y` = 2*x = 2*3 =6

    assert repr(dy_dx) == "<jaxtape.Tensor: shape=(), dtype=float32, numpy=6.0>"


def test_seed_003_code1_gradients_function():
    pi = math.pi
    tf.enable_eager_execution()
    tfe = tf.contrib.eager

    def f(x):
        return tf.square(tf.sin(x))

    assert f(pi / 2).numpy() == 1.0

    def grad(f):  # as in the TF 1.x eager tutorial
        return lambda x: tfe.gradients_function(f)(x)[0]

    x = tf.lin_space(-2 * pi, 2 * pi, 100)  # 100 points between -2pi ~ 2pi
    assert x.shape == (100,)
    np.testing.assert_allclose(f(x).numpy(), np.sin(x.numpy()) ** 2, atol=1e-6)
    # d/dx sin(x)^2 = sin(2x)
    np.testing.assert_allclose(grad(f)(x).numpy(), np.sin(2 * x.numpy()), atol=1e-5)
    # Nesting gives higher derivatives: d2/dx2 sin(x)^2 = 2 cos(2x)
    np.testing.assert_allclose(grad(grad(f))(x).numpy(), 2 * np.cos(2 * x.numpy()),
                               atol=1e-5)


@pytest.mark.filterwarnings("ignore::jaxtape.debug.GradientWarning")  # int y, as TF
def test_seed_003_code2_power(capsys):
    tf.enable_eager_execution()
    tfe = tf.contrib.eager  # shorthand for some symbols

    # x^y
    def f(x, y):
        output = 1
        # Must use range(int(y)) instead of range(y) in Python 3 when
        # using TensorFlow 1.10 and earlier. Can use range(y) in 1.11+
        for i in range(int(y)):  # you can use for loop (#^.^#)
            output = tf.multiply(output, x)
        return output

    # d x^y / d x
    def g(x, y):
        # Return the gradient of 'f' with respect to it's first parameter
        return tfe.gradients_function(f)(x, y)[0]

    print(f(3, 2).numpy())
    print(g(3.0, 2).numpy())
    print(f(3, 3).numpy())
    print(g(3.0, 3).numpy())
    assert capsys.readouterr().out.split() == ["9", "6.0", "27", "27.0"]


def test_seed_003_code3_persistent_and_nested():
    tf.enable_eager_execution()

    x = tf.ones((2, 2))

    with tf.GradientTape(persistent=True) as t:  # persistent 持久的
        t.watch(x)
        y = tf.reduce_sum(x)  # 就是求和的意思(降维)
        z = tf.multiply(y, y)

    # use the same tape to compute the derivative of z with
    # respect to the intermediate value y
    dz_dy = t.gradient(z, y)  # 对y求导
    assert dz_dy.numpy() == 8.0

    # Derivative of z with respect to the original input tensor x
    dz_dx = t.gradient(z, x)  # 对x求导
    np.testing.assert_array_equal(dz_dx.numpy(), np.full((2, 2), 8.0))

    x = tf.Variable(1.0)  # Convert the Python 1.0 to a Tensor object
    with tf.GradientTape() as t:
        with tf.GradientTape() as t2:
            y = x * x * x
        # Compute the gradient inside the 't' context manager
        # which means the gradient computation is differentiable as well.
        dy_dx = t2.gradient(y, x)
    d2y_dx2 = t.gradient(dy_dx, x)
    assert dy_dx.numpy() == 3.0
    assert d2y_dx2.numpy() == 6.0


def test_seed_004_eager_addition(capsys):
    # 此处代码需要使用 tf 2 版本运行 # 1.创建输入张量，并赋初始值
    a = tf.constant(2.)
    b = tf.constant(4.)
    # 2.直接计算，并打印结果
    print('a+b=', a + b)
    assert capsys.readouterr().out == "a+b= jaxtape.Tensor(6.0, shape=(), dtype=float32)\n"


def test_seed_004_tape_loss_and_onehot():
    # The tape half of seed 004's MNIST step, with a two-layer model written in
    # core ops (the Keras model arrives with the Keras issue).
    rng = np.random.default_rng(0)
    x = tf.constant(rng.random((8, 28, 28), dtype=np.float32))
    y = tf.constant(rng.integers(0, 10, 8), dtype=tf.int32)
    w = tf.Variable(rng.normal(size=(784, 10)).astype(np.float32) * 0.01)

    def model(x):
        return tf.matmul(x, w)

    with tf.GradientTape() as tape:  # 构建梯度记录环境
        # 打平操作，[b, 28, 28] => [b, 784]
        x = tf.reshape(x, (-1, 28 * 28))
        out = model(x)
        # [b] => [b, 10]
        y_onehot = tf.one_hot(y, depth=10)
        # 计算差的平方和，[b, 10]
        loss = tf.square(out - y_onehot)
        # 计算每个样本的平均误差，[b]
        loss = tf.reduce_sum(loss) / x.shape[0]
    grads = tape.gradient(loss, [w])
    expected = 2 * x.numpy().T @ (out.numpy() - y_onehot.numpy()) / 8
    np.testing.assert_allclose(grads[0].numpy(), expected, rtol=1e-4, atol=1e-6)


def test_seed_004_device_placement(capsys):
    # The seed leaves `n` to the reader; on a CPU-only machine TF places the
    # '/gpu:0' half on the CPU (soft placement), and so does jaxtape.
    n = 10
    # 创建在 CPU 环境上运算的 2 个矩阵
    with tf.device('/cpu:0'):
        cpu_a = tf.random.normal([1, n])
        cpu_b = tf.random.normal([n, 1])
        print(cpu_a.device, cpu_b.device)
    # 创建使用 GPU 环境运算的 2 个矩阵
    with tf.device('/gpu:0'):
        gpu_a = tf.random.normal([1, n])
        gpu_b = tf.random.normal([n, 1])
        print(gpu_a.device, gpu_b.device)
    lines = capsys.readouterr().out.splitlines()
    cpu = "/job:localhost/replica:0/task:0/device:CPU:0"
    assert lines[0] == f"{cpu} {cpu}"
    kind = "GPU" if tf.config.list_physical_devices('GPU') else "CPU"
    assert lines[1].split() == [f"/job:localhost/replica:0/task:0/device:{kind}:0"] * 2
    assert list(gpu_a._value.devices())[0].platform == kind.lower()


def test_seed_004_memory_growth(capsys):
    # The seed's block with its line breaks restored (it prints `except ...` on
    # the `set_memory_growth` line).
    # 设置 GPU 显存使用方式
    # 获取 GPU 设备列表
    gpus = tf.config.experimental.list_physical_devices('GPU')
    if gpus:
        try:
            # 设置 GPU 为增长式占用
            for gpu in gpus:
                tf.config.experimental.set_memory_growth(gpu, True)
        except RuntimeError as e:
            # 打印异常
            print(e)
    assert capsys.readouterr().out == ""
    for gpu in gpus:
        assert tf.config.experimental.get_memory_growth(gpu)
