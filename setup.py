"""fedbound's compiled kernels (fedbound/tasks/_kernels.c, issue 35: the MLP's local steps and the
seeded minibatch order), built where a C compiler is found; where none is (or the build fails),
fedbound computes the same in numpy (``fedbound.tasks.mlp.descend``,
``fedbound.tasks.batches.SeededBatches``). Everything else is in pyproject.toml."""
from setuptools import Extension, setup

# no -ffast-math: it would link crtfastmath and switch the whole process to flush-to-zero, and
# reassociate the two-part reduction of the kernel's exp; what the kernel vectorizes it writes out
FLAGS = ["-O3", "-fno-math-errno", "-fno-trapping-math", "-Wall"]

setup(ext_modules=[Extension("fedbound.tasks._kernels", ["fedbound/tasks/_kernels.c"],
                             depends=["fedbound/tasks/_mlp_steps.h"], extra_compile_args=FLAGS,
                             libraries=["m"], optional=True)])
