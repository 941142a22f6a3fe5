"""A stand-in for the few parts of torch that symmem's Python argument checks read: tensors with a
shape, a dtype, a device, a layout flag and an address, and the calls the package makes around
them. It lets the host tier (no GPU, often no PyTorch) check which calls the package accepts and
which it refuses. check_arguments.py installs it as `torch` before importing symmem."""


class dtype:
    def __init__(self, name, itemsize):
        self.name, self.itemsize = name, itemsize

    def __repr__(self):
        return f"torch.{self.name}"


float32, float16, bfloat16, float64 = dtype("float32", 4), dtype("float16", 2), dtype("bfloat16", 2), dtype("float64", 8)
int32, int64, uint8 = dtype("int32", 4), dtype("int64", 8), dtype("uint8", 1)
float8_e4m3fn, float8_e5m2 = dtype("float8_e4m3fn", 1), dtype("float8_e5m2", 1)
int8, bool, complex64, complex128 = dtype("int8", 1), dtype("bool", 1), dtype("complex64", 8), dtype("complex128", 16)


class device:
    def __init__(self, kind, index=None):
        if isinstance(kind, device):
            kind, index = kind.type, kind.index
        elif ":" in kind:
            kind, index = kind.split(":")[0], int(kind.split(":")[1])
        self.type, self.index = kind, (0 if kind == "cuda" and index is None else index)

    def __repr__(self):
        return self.type if self.index is None else f"{self.type}:{self.index}"


class Size(tuple):
    pass


class Tensor:
    _next_address = 1 << 30

    def __init__(self, shape, dtype=float32, device_="cuda:0", contiguous=True, address=None, storage=None):
        self.shape, self.dtype, self.device = Size(shape), dtype, device(device_)
        self._contiguous = contiguous
        if address is None:
            address = Tensor._next_address
            Tensor._next_address += 1 << 24
        self._address = address
        self._storage = address if storage is None else storage  # where the storage (the allocation) starts

    @property
    def is_cuda(self):
        return self.device.type == "cuda"

    def get_device(self):
        return self.device.index if self.is_cuda else -1

    def is_contiguous(self):
        return self._contiguous

    def numel(self):
        n = 1
        for s in self.shape:
            n *= s
        return n

    def element_size(self):
        return self.dtype.itemsize

    def data_ptr(self):  # as torch: 0 for a tensor of no elements, wherever it lies in its storage
        return self._address if self.numel() else 0

    def untyped_storage(self):
        return _Storage(self._storage)

    def storage_offset(self):
        return (self._address - self._storage) // self.element_size()

    def dim(self):
        return len(self.shape)

    def t(self):  # a transposed view: the same memory, not contiguous
        return Tensor(tuple(reversed(self.shape)), self.dtype, self.device, False, self._address, self._storage)

    def __getitem__(self, s):  # a slice of the first dimension
        start, stop, _ = s.indices(self.shape[0])
        row = self.numel() // self.shape[0] * self.element_size()
        return Tensor((stop - start,) + tuple(self.shape[1:]), self.dtype, self.device, self._contiguous,
                      self._address + start * row, self._storage)


class _Storage:
    def __init__(self, address):
        self._address = address

    def data_ptr(self):
        return self._address


def empty(*shape, dtype=float32, device="cuda:0"):
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = tuple(shape[0])
    return Tensor(shape, dtype, device)


class _Cuda:
    capturing = False

    def is_current_stream_capturing(self):
        return self.capturing

    def is_available(self):
        return True

    def current_device(self):
        return 0


cuda = _Cuda()


class _C:
    @staticmethod
    def _cuda_getCurrentRawStream(device_index):
        return 0

    @staticmethod
    def _cuda_getDevice():
        return 0
