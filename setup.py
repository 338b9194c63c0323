"""The compiled local steps of the MLP (fedbound/tasks/_mlp_kernel.c, issue 35), built where a C
compiler is found; where none is (or the build fails), fedbound runs the same steps in numpy
(``fedbound.tasks.mlp.descend``). Everything else is in pyproject.toml."""
from setuptools import Extension, setup

# no -ffast-math: it would link crtfastmath and switch the whole process to flush-to-zero, and
# reassociate the two-part reduction of the kernel's exp; what the kernel vectorizes it writes out
FLAGS = ["-O3", "-fno-math-errno", "-fno-trapping-math", "-Wall"]

setup(ext_modules=[Extension("fedbound.tasks._mlp_kernel", ["fedbound/tasks/_mlp_kernel.c"],
                             depends=["fedbound/tasks/_mlp_kernel_body.h"], extra_compile_args=FLAGS,
                             libraries=["m"], optional=True)])
