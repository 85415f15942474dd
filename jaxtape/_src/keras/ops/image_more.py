"""Keras 3's remaining `keras.ops.image` functions: `affine_transform`,
`perspective_transform`, `elastic_transform`, `extract_patches_3d` and `ssim`.

Each is a thin wrapper applying Keras's argument checks and dtype rules
around a pure jnp body registered with `_base.body` (so it runs eagerly,
inside `jaxtape.function`, and records on a `GradientTape`). Sampling
follows TF's `ImageProjectiveTransformV3` (Keras's TF backend): bilinear
reads of the four neighbours with `fill_value` outside the image, nearest
rounds half away from zero.

Layer L5 (keras); imports `core` and this package (`random_ops` and
`layers.preprocessing.image`'s affine op inside functions, to break cycles).
"""

from __future__ import annotations

from functools import partial

import jax
import jax.numpy as jnp
import numpy as np

from jaxtape._src.core import errors
from jaxtape._src.keras.ops import dtypes as kd
from jaxtape._src.keras.ops import numpy as knp
from jaxtape._src.keras.ops._base import body, tensor
from jaxtape._src.keras.ops.image import _images
from jaxtape._src.keras.ops.nn import _data_format

_INTERPOLATIONS = ("nearest", "bilinear")
_FILL_MODES = ("constant", "nearest", "wrap", "reflect")  # TF's ("mirror": no)


def _check_interpolation(interpolation):
    if interpolation not in _INTERPOLATIONS:
        raise ValueError(
            "Invalid value for argument `interpolation`. Expected of one "
            f"{_INTERPOLATIONS}. Received: interpolation={interpolation}"
        )


def _nhwc(x, channels_first):
    """`x` as `(N, H, W, C)` and the function that undoes it."""
    single = x.ndim == 3
    y = x[None] if single else x
    if channels_first:
        y = jnp.transpose(y, (0, 2, 3, 1))

    def restore(out):
        if channels_first:
            out = jnp.transpose(out, (0, 3, 1, 2))
        return out[0] if single else out

    return y, restore


def _compute_dtype(dtype):
    return dtype if "float" in str(dtype) else jnp.float32


# -- projective sampling (TF's ImageProjectiveTransformV3, constant fill) --------------
def _read(image, yi, xi, fill):
    """`image[yi, xi]` (integer float coordinates), `fill` outside."""
    h, w = image.shape[0], image.shape[1]
    inside = (yi >= 0) & (yi <= h - 1) & (xi >= 0) & (xi <= w - 1)
    yc = jnp.clip(yi, 0, h - 1).astype(jnp.int32)
    xc = jnp.clip(xi, 0, w - 1).astype(jnp.int32)
    return jnp.where(inside[..., None], image[yc, xc], fill)


def _sample_constant(image, y, x, order, fill):
    """TF's nearest (`std::round`) or bilinear read of one `(H, W, C)` image."""
    if order == 0:
        rnd = jnp.sign(y) * jnp.floor(jnp.abs(y) + 0.5)
        rnx = jnp.sign(x) * jnp.floor(jnp.abs(x) + 0.5)
        return _read(image, rnd, rnx, fill)
    y0, x0 = jnp.floor(y), jnp.floor(x)
    y1, x1 = y0 + 1, x0 + 1
    wx0, wx1 = (x1 - x)[..., None], (x - x0)[..., None]
    top = wx0 * _read(image, y0, x0, fill) + wx1 * _read(image, y0, x1, fill)
    bottom = wx0 * _read(image, y1, x0, fill) + wx1 * _read(image, y1, x1, fill)
    return (y1 - y)[..., None] * top + (y - y0)[..., None] * bottom


def _flat_inverse(t):
    """TF's `matrices_to_flat_transforms(inv(flat_transforms_to_matrices(t)))`."""
    m = jnp.concatenate([t, jnp.ones_like(t[:, :1])], axis=1).reshape(-1, 3, 3)
    inv = jnp.linalg.inv(m).reshape(-1, 9)
    return inv[:, :8] / inv[:, 8:]


@partial(jax.custom_vjp, nondiff_argnums=(2, 3))
def projective(x, transforms, order, fill_value):
    """Each output pixel `(y, x)` of `(N, H, W, C)` images read at
    `((a0 x + a1 y + a2) / k, (b0 x + b1 y + b2) / k)`, `k = c0 x + c1 y + 1`
    (TF's 8-number transforms, one per image or one for all); `k == 0` and
    points outside give `fill_value` (TF's constant fill mode)."""
    n, h, w, _ = x.shape
    cdt = _compute_dtype(x.dtype)
    t = jnp.broadcast_to(transforms.astype(jnp.float32), (n, 8))
    yy, xx = jnp.meshgrid(
        jnp.arange(h, dtype=jnp.float32),
        jnp.arange(w, dtype=jnp.float32),
        indexing="ij",
    )

    def one(image, ti):
        k = ti[6] * xx + ti[7] * yy + 1.0
        safe = jnp.where(k == 0, 1.0, k)
        sx = (ti[0] * xx + ti[1] * yy + ti[2]) / safe
        sy = (ti[3] * xx + ti[4] * yy + ti[5]) / safe
        fill = jnp.asarray(fill_value, cdt)
        out = _sample_constant(image.astype(cdt), sy, sx, order, fill)
        return jnp.where((k == 0)[..., None], fill, out)

    return jax.vmap(one)(x, t).astype(x.dtype)


def _projective_fwd(x, transforms, order, fill_value):
    return projective(x, transforms, order, fill_value), transforms


def _projective_bwd(order, fill_value, transforms, g):
    """TF's gradient of `ImageProjectiveTransformV3`: the output gradient
    warped by the inverse transform (zero fill); none for the transforms."""
    del fill_value
    n = g.shape[0]
    t = jnp.broadcast_to(transforms.astype(jnp.float32), (n, 8))
    return projective(g, _flat_inverse(t), order, 0.0), jnp.zeros_like(transforms)


projective.defvjp(_projective_fwd, _projective_bwd)


def _homography(start, end):
    """Keras's `compute_homography_matrix`: the 8 transform numbers that map
    each output point of `end` to its `start` point (an 8x8 solve)."""
    sx, sy = start[:, :, 0], start[:, :, 1]
    ex, ey = end[:, :, 0], end[:, :, 1]
    one, zero = jnp.ones_like(ex), jnp.zeros_like(ex)
    rows = []
    for i in range(4):
        rows.append(
            jnp.stack(
                [
                    ex[:, i],
                    ey[:, i],
                    one[:, i],
                    zero[:, i],
                    zero[:, i],
                    zero[:, i],
                    -sx[:, i] * ex[:, i],
                    -sx[:, i] * ey[:, i],
                ],
                axis=-1,
            )  # fmt: skip
        )
        rows.append(
            jnp.stack(
                [
                    zero[:, i],
                    zero[:, i],
                    zero[:, i],
                    ex[:, i],
                    ey[:, i],
                    one[:, i],
                    -sy[:, i] * ex[:, i],
                    -sy[:, i] * ey[:, i],
                ],
                axis=-1,
            )  # fmt: skip
        )
    a = jnp.stack(rows, axis=1)
    b = jnp.stack([sx[:, 0], sy[:, 0], sx[:, 1], sy[:, 1], sx[:, 2], sy[:, 2],
                   sx[:, 3], sy[:, 3]], axis=-1)  # fmt: skip
    return jnp.linalg.solve(a, b[..., None])[..., 0]


@body("perspective_transform")
def _perspective(x, start, end, *, order, fill_value, channels_first):
    y, restore = _nhwc(x, channels_first)
    start = start.astype(jnp.float32).reshape(-1, 4, 2)
    end = end.astype(jnp.float32).reshape(-1, 4, 2)
    return restore(projective(y, _homography(start, end), order, fill_value))


def _points(points, name):
    p = tensor(points, "float32")
    shape = tuple(np.shape(p))
    if len(shape) not in (2, 3) or shape[-2:] != (4, 2):
        raise ValueError(
            f"Invalid {name} shape: expected (4,2) for a single image or (N,4,2) "
            f"for a batch. Received shape: {shape}"
        )
    return p, shape


def perspective_transform(
    images,
    start_points,
    end_points,
    interpolation="bilinear",
    fill_value=0,
    data_format=None,
):
    """Keras 3's `keras.ops.image.perspective_transform`: the homography that
    takes `end_points` to `start_points` (four `(x, y)` corners per image),
    applied as TF's `ImageProjectiveTransformV3` with constant fill. The
    gradient with respect to `images` is TF's: the output gradient warped
    back by the inverse transform (not the exact adjoint); the points get
    none.

    Differences from Keras on TF: None known.
    """
    channels_first = _data_format(data_format) == "channels_first"
    _check_interpolation(interpolation)
    x, _ = _images(images, data_format)
    start, s_shape = _points(start_points, "start_points")
    end, e_shape = _points(end_points, "end_points")
    if s_shape != e_shape:
        raise ValueError(
            "start_points and end_points must have the same shape. Received "
            f"start_points.shape={s_shape}, end_points.shape={e_shape}"
        )
    return _perspective(
        x,
        start,
        end,
        order=_INTERPOLATIONS.index(interpolation),
        fill_value=float(fill_value),
        channels_first=channels_first,
    )


# -- affine_transform ------------------------------------------------------------------
def affine_transform(
    images,
    transform,
    interpolation="bilinear",
    fill_mode="constant",
    fill_value=0,
    data_format=None,
):
    """Keras 3's `keras.ops.image.affine_transform`: each output pixel `(y, x)`
    read at `(b0 x + b1 y + b2, a0 x + a1 y + a2)` for TF's 8-number
    `transform` (one, or one per image), with `fill_mode` constant, nearest,
    wrap or reflect (TF's rules, as `RandomRotation`).

    Differences from Keras on TF: None known.
    """
    # cycle: ops.image_more -> layers -> preprocessing.augment -> ops.image_more
    from jaxtape._src.keras.layers.preprocessing.image import _affine

    channels_first = _data_format(data_format) == "channels_first"
    _check_interpolation(interpolation)
    if fill_mode not in _FILL_MODES:
        raise ValueError(
            "Invalid value for argument `fill_mode`. Expected of one "
            f"{_FILL_MODES}. Received: fill_mode={fill_mode}"
        )
    x, _ = _images(images, data_format)
    t = tensor(transform, "float32")
    if np.ndim(t) not in (1, 2):
        raise ValueError(
            "Invalid transform rank: expected rank 1 (single transform) or rank 2 "
            f"(batch of transforms). Received input with shape: transform.shape="
            f"{np.shape(t)}"
        )
    return _affine(x, t, interpolation, fill_mode, float(fill_value), channels_first)


# -- elastic_transform -----------------------------------------------------------------
def _blur_field(field, sigma, ksize):
    """Keras's TF `gaussian_blur` of `(N, H, W)` fields: a `6 * int(sigma) | 1`
    tap kernel (embedded in the static `ksize`, zero outside), zero padded."""
    half = (ksize - 1) // 2
    t = jnp.arange(ksize, dtype=field.dtype) - half
    radius = 3 * jnp.floor(sigma)  # (6 * int(sigma) | 1 - 1) / 2
    g = jnp.where(jnp.abs(t) <= radius, jnp.exp(-0.5 * (t / sigma) ** 2), 0.0)
    g = g / jnp.sum(g)
    kernel = jnp.outer(g, g)[:, :, None, None]
    out = jax.lax.conv_general_dilated(
        field[..., None],
        kernel.astype(field.dtype),
        (1, 1),
        "SAME",
        dimension_numbers=("NHWC", "HWIO", "NHWC"),
        precision=jax.lax.Precision.HIGHEST,
    )
    return out[..., 0]


def box_muller(u1, u2):
    """Standard normals from two uniform [0, 1) arrays (Box and Muller): no
    `erf_inv`, so cheap to compile next to other draws of one key."""
    return jnp.sqrt(-2.0 * jnp.log1p(-u1)) * jnp.cos(2.0 * np.pi * u2)


def elastic(y, noise, alpha, sigma, *, ksize, order, fill_mode, fill_value):
    """Keras's elastic deformation of `(N, H, W, C)` images: one standard
    normal field `noise` `(N, H, W)` times `sigma`, blurred, scaled by
    `alpha`, added to both coordinates (Keras draws `dx` and `dy` from the
    same seed), then sampled by `map_coordinates` with `fill_mode`."""
    n, h, w, _ = y.shape
    cdt = _compute_dtype(y.dtype)
    alpha, sigma = alpha.astype(cdt), sigma.astype(cdt)
    d = _blur_field(noise.astype(cdt) * sigma, sigma, ksize)
    yy, xx = jnp.meshgrid(jnp.arange(h, dtype=cdt), jnp.arange(w, dtype=cdt),
                          indexing="ij")  # fmt: skip
    sy, sx = yy + alpha * d, xx + alpha * d

    def one(image, cy, cx):
        def channel(c):
            return jax.scipy.ndimage.map_coordinates(
                c, [cy, cx], order=order, mode=fill_mode, cval=fill_value
            )

        return jax.vmap(channel, in_axes=-1, out_axes=-1)(image)

    return jax.vmap(one)(y.astype(cdt), sy, sx).astype(y.dtype)


@body("elastic_transform", differentiable=True)
def _elastic(x, key, alpha, sigma, *, ksize, order, fill_mode, fill_value, cf):
    y, restore = _nhwc(x, cf)
    n, h, w, _ = y.shape
    u = jax.random.uniform(jax.random.wrap_key_data(key), (2, n, h, w), jnp.float32)
    return restore(
        elastic(
            y,
            box_muller(u[0], u[1]),
            alpha,
            sigma,
            ksize=ksize,
            order=order,
            fill_mode=fill_mode,
            fill_value=fill_value,
        )  # fmt: skip
    )


def elastic_kernel_size(sigma: float) -> int:
    """Keras's TF-backend kernel size for `sigma`: `6 * int(sigma) | 1`."""
    return (6 * int(sigma)) | 1


def elastic_transform(
    images,
    alpha=20.0,
    sigma=5.0,
    interpolation="bilinear",
    fill_mode="reflect",
    fill_value=0.0,
    seed=None,
    data_format=None,
):
    """Keras 3's `keras.ops.image.elastic_transform`: random elastic
    deformation (displacements `alpha * blur(sigma * normal)`).

    Differences from Keras on TF: the random field is JAX's (other numbers
    for the same seed); out-of-image reads follow SciPy's `fill_mode` rules
    (as `keras.ops.image.map_coordinates` here); `alpha` and `sigma` must be
    Python numbers.
    """
    from jaxtape._src.keras.random_ops import draw_seed  # cycle: random_ops -> layers

    channels_first = _data_format(data_format) == "channels_first"
    _check_interpolation(interpolation)
    if fill_mode not in _FILL_MODES:
        raise ValueError(
            "Invalid value for argument `fill_mode`. Expected of one "
            f"{_FILL_MODES}. Received: fill_mode={fill_mode}"
        )
    x, _ = _images(images, data_format)
    d = knp._name(x)
    cdt = d if "float" in d else "float32"
    return _elastic(
        x,
        draw_seed(seed),
        tensor(alpha, cdt),
        tensor(sigma, cdt),
        ksize=elastic_kernel_size(float(knp.static(sigma))),
        order=_INTERPOLATIONS.index(interpolation),
        fill_mode=fill_mode,
        fill_value=float(fill_value),
        cf=channels_first,
    )


# -- extract_patches_3d ----------------------------------------------------------------
@body("extract_patches_3d")
def _patches_3d(x, *, size, strides, dilation, padding):
    """Keras's identity-kernel 3-D convolution on `(N, D, H, W, C)`: each
    output holds its patch flattened in `(d, h, w, c)` order."""
    c = x.shape[-1]
    p = jax.lax.conv_general_dilated_patches(
        x,
        size,
        strides,
        padding.upper(),
        rhs_dilation=dilation,
        dimension_numbers=("NDHWC", "OIDHW", "NDHWC"),
        precision=jax.lax.Precision.HIGHEST,
    )
    # conv_general_dilated_patches orders the features (c, d, h, w).
    n, od, oh, ow, _ = p.shape
    p = p.reshape(n, od, oh, ow, c, -1)
    return jnp.swapaxes(p, -1, -2).reshape(n, od, oh, ow, -1).astype(x.dtype)


def _triple(v, name):
    v = knp.static(v)
    if isinstance(v, int):
        return (v, v, v)
    if len(v) != 3:
        raise ValueError(f"Invalid `{name}` argument. Got: {v}")
    return tuple(int(a) for a in v)


def extract_patches_3d(
    volumes, size, strides=None, dilation_rate=1, padding="valid", data_format=None
):
    """Keras 3's `keras.ops.image.extract_patches_3d`: 3-D patches of
    `(D, H, W, C)` volumes (or batches) flattened into the channel axis in
    `(d, h, w, c)` order.

    Differences from Keras on TF: `dilation_rate > 1` with `strides > 1`
    works (TF's convolution refuses it).
    """
    size_v = knp.static(size)
    if not isinstance(size_v, int) and len(size_v) != 3:
        raise TypeError(
            "Invalid `size` argument. Expected an int or a tuple of length 3. "
            f"Received: size={size}"
        )
    k = _triple(size_v, "size")
    s = k if strides is None else _triple(strides, "strides")
    dl = _triple(dilation_rate, "dilation_rate")
    pad = str(padding).lower()
    if pad not in ("valid", "same"):
        raise ValueError(
            f"`padding` must be 'valid' or 'same'. Received: padding={padding}"
        )
    channels_first = _data_format(data_format) == "channels_first"
    x = tensor(volumes)
    if np.ndim(x) not in (4, 5):
        raise ValueError(
            "Invalid volumes rank: expected rank 4 (single volume) or rank 5 "
            f"(batch of volumes). Received input with shape: {np.shape(x)}"
        )
    unbatched = np.ndim(x) == 4
    if unbatched:
        x = knp.expand_dims(x, 0)
    if channels_first:
        x = knp.transpose(x, (0, 2, 3, 4, 1))
    out = _patches_3d(x, size=k, strides=s, dilation=dl, padding=pad)
    if channels_first:
        out = knp.transpose(out, (0, 4, 1, 2, 3))
    return knp.squeeze(out, 0) if unbatched else out


# -- ssim ------------------------------------------------------------------------------
@body("ssim")
def _ssim(a, b, *, max_val, filter_size, filter_sigma, k1, k2, dtype, compute):
    a, b = a.astype(compute), b.astype(compute)
    n, h, w, c = a.shape
    t = jnp.arange(filter_size, dtype=compute) - (filter_size - 1) / 2.0
    g = jnp.exp(-(t**2) / (2.0 * filter_sigma**2))
    g = g / jnp.sum(g)
    kernel = jnp.outer(g, g)[:, :, None, None]

    def filt(v):
        return jax.lax.conv_general_dilated(
            v,
            kernel,
            (1, 1),
            "VALID",
            dimension_numbers=("NHWC", "HWIO", "NHWC"),
            precision=jax.lax.Precision.HIGHEST,
        )

    a = jnp.transpose(a, (0, 3, 1, 2)).reshape(-1, h, w, 1)
    b = jnp.transpose(b, (0, 3, 1, 2)).reshape(-1, h, w, 1)
    c1, c2 = (k1 * max_val) ** 2, (k2 * max_val) ** 2
    mu1, mu2 = filt(a), filt(b)
    s11 = filt(a * a) - mu1 * mu1
    s22 = filt(b * b) - mu2 * mu2
    s12 = filt(a * b) - mu1 * mu2
    num = (2.0 * mu1 * mu2 + c1) * (2.0 * s12 + c2)
    den = (mu1 * mu1 + mu2 * mu2 + c1) * (s11 + s22 + c2)
    per_channel = jnp.mean(num / den, axis=(1, 2, 3)).reshape(n, c)
    return jnp.mean(per_channel, axis=-1).astype(dtype)


def ssim(
    image1,
    image2,
    max_val=1.0,
    filter_size=11,
    filter_sigma=1.5,
    k1=0.01,
    k2=0.03,
    data_format=None,
):
    """Keras 3's `keras.ops.image.ssim`: the mean structural similarity of
    each image pair (Gaussian `filter_size` window, 'valid'), averaged over
    channels; a scalar for single images, `(N,)` for batches, in `image1`'s
    dtype.

    Differences from Keras on TF: None known.
    """
    channels_first = _data_format(data_format) == "channels_first"
    x1, x2 = tensor(image1), tensor(image2)
    for name, v in (("image1", x1), ("image2", x2)):
        if np.ndim(v) not in (3, 4):
            raise ValueError(
                f"Invalid {name} rank: expected rank 3 (single image) or rank 4 "
                f"(batch of images). Received input with shape: {name}.shape="
                f"{np.shape(v)}"
            )
    d = knp._name(x1)
    compute = kd.result_type(d, float)
    unbatched = np.ndim(x1) == 3
    if unbatched:
        x1, x2 = knp.expand_dims(x1, 0), knp.expand_dims(x2, 0)
    if channels_first:
        x1, x2 = knp.moveaxis(x1, 1, -1), knp.moveaxis(x2, 1, -1)
    h, w = np.shape(x1)[1:3]
    if int(filter_size) > min(h, w):
        raise errors.InvalidArgumentError(
            None,
            None,
            "Computed output size would be negative: the SSIM window "
            f"filter_size={filter_size} is larger than the images ({h}x{w}).",
        )
    out = _ssim(
        x1,
        x2,
        max_val=float(max_val),
        filter_size=int(filter_size),
        filter_sigma=float(filter_sigma),
        k1=float(k1),
        k2=float(k2),
        dtype=kd.jnp_dtype(d),
        compute=kd.jnp_dtype(compute),
    )
    return knp.squeeze(out, 0) if unbatched else out
