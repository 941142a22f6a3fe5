"""pip install . : builds the C++ library and the extension with CMake (needs CMake, Ninja or
make, the CUDA toolkit, NCCL and pybind11) and ships them inside the symmem package."""
import glob
import os
import shutil
import subprocess
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

HERE = os.path.dirname(os.path.abspath(__file__))


class CMakeBuild(build_ext):
    def build_extension(self, ext):
        build = os.path.abspath(os.path.join(self.build_temp, "cmake"))
        out = os.path.dirname(os.path.abspath(self.get_ext_fullpath(ext.name)))
        os.makedirs(build, exist_ok=True)
        cfg = ["cmake", "-S", HERE, "-B", build, "-DCMAKE_BUILD_TYPE=Release", "-DSYMMEM_BUILD_PYTHON=ON",
               "-DSYMMEM_BUILD_TESTS=OFF", "-DSYMMEM_BUILD_BENCH=OFF", "-DSYMMEM_BUILD_EXAMPLES=OFF",
               f"-DPython3_EXECUTABLE={sys.executable}"]
        if shutil.which("ninja"):
            cfg += ["-G", "Ninja"]
        subprocess.check_call(cfg)
        subprocess.check_call(["cmake", "--build", build, "--target", "symmem_python", "-j", str(os.cpu_count() or 2)])
        os.makedirs(out, exist_ok=True)
        # The extension carries the library itself (python/CMakeLists.txt says why).
        for f in glob.glob(os.path.join(build, "python", "symmem", "_C*.so")):
            shutil.copy2(f, out, follow_symlinks=True)


setup(
    packages=["symmem"],
    package_dir={"": "python"},
    ext_modules=[Extension("symmem._C", sources=[])],
    cmdclass={"build_ext": CMakeBuild},
    zip_safe=False,
)
