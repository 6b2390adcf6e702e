# tests/python.cmake - the Python API (python/pldrun, docs/python.md): tests/python/test_api.py under
# pytest with Debian's python3 (python3-numpy, python3-pytest: scripts/install_deps.sh installs them).
# pyenv's python3 usually lacks them, so /usr/bin/python3 is preferred. Without numpy or pytest the test
# fails and says what to install (never a skip). Both trees: the runs are short MPI jobs of pldrun.
# python_pypto: the pytest plugin pldrun.pypto (python/pldrun/pypto.py, docs/pypto.md) driving PyPTO-style
# test files in a pytest subprocess on a stand-in PyPTO the test writes (CI has no PyPTO; torch when
# importable, else a stand-in): capture without ptoas, argument mapping, in-place copy-back, pldrun's
# failures and the refused SubWorkers / device tensors. Same interpreter and checks as python_api.
find_program(PLD_PYTHON3_API NAMES python3 PATHS /usr/bin NO_DEFAULT_PATH)
if(NOT PLD_PYTHON3_API)
  find_program(PLD_PYTHON3_API NAMES python3)
endif()
if(PLD_PYTHON3_API)
  add_test(NAME python_api
           COMMAND "${PLD_PYTHON3_API}" -c
                   "import sys; import importlib.util as u; m = [x for x in ('numpy', 'pytest') if not u.find_spec(x)]; sys.exit('python_api: ${PLD_PYTHON3_API} lacks ' + ', '.join(m) + ': apt-get install python3-numpy python3-pytest (scripts/install_deps.sh)') if m else None; import pytest; sys.exit(pytest.main(['-q', '-p', 'no:cacheprovider', '${CMAKE_CURRENT_SOURCE_DIR}/python/test_api.py']))")
  set_tests_properties(python_api PROPERTIES LABELS "python;mpi" TIMEOUT 600 PROCESSORS 2
                       ENVIRONMENT "PLDRUN=$<TARGET_FILE:pldrun>;${PLD_MPI_TEST_ENV}")
  add_test(NAME python_pypto
           COMMAND "${PLD_PYTHON3_API}" -c
                   "import sys; import importlib.util as u; m = [x for x in ('numpy', 'pytest') if not u.find_spec(x)]; sys.exit('python_pypto: ${PLD_PYTHON3_API} lacks ' + ', '.join(m) + ': apt-get install python3-numpy python3-pytest (scripts/install_deps.sh)') if m else None; import pytest; sys.exit(pytest.main(['-q', '-p', 'no:cacheprovider', '${CMAKE_CURRENT_SOURCE_DIR}/python/test_pypto.py']))")
  set_tests_properties(python_pypto PROPERTIES LABELS "python;mpi" TIMEOUT 300 PROCESSORS 2
                       ENVIRONMENT "PLDRUN=$<TARGET_FILE:pldrun>;${PLD_MPI_TEST_ENV}")
  # python_subworker (issue 41): SubWorkers (Python HOST functions) through the embedded-Python bridge
  # (src/pybridge, docs/python.md "SubWorkers"): tests/python/subworker/host_sub.pld at P = 2 against a numpy
  # golden with the program's bodies, a --subworkers file, {name: function} and torch tensors; a Python
  # exception as a located error with its traceback (exit 70); PLDRUN_NO_PYTHON=1 as a build without the
  # bridge (exit 65 with the reason). A build without the bridge (PLDRUN_PYTHON=OFF) checks the refusal
  # only. Under ASan the embedded Python's, numpy's and torch's memory still held at pldrun's leak check is
  # theirs (Python is never finalised): pldrun's __lsan_default_suppressions (tools/pldrun/main.c) names
  # libpython3 and Debian's /usr/lib/python3* directories, so this test and python_pypto need no setting.
  add_test(NAME python_subworker
           COMMAND "${PLD_PYTHON3_API}" -c
                   "import sys; import importlib.util as u; m = [x for x in ('numpy', 'pytest') if not u.find_spec(x)]; sys.exit('python_subworker: ${PLD_PYTHON3_API} lacks ' + ', '.join(m) + ': apt-get install python3-numpy python3-pytest (scripts/install_deps.sh)') if m else None; import pytest; sys.exit(pytest.main(['-q', '-p', 'no:cacheprovider', '${CMAKE_CURRENT_SOURCE_DIR}/python/test_subworker.py']))")
  set_tests_properties(python_subworker PROPERTIES LABELS "python;mpi" TIMEOUT 300 PROCESSORS 2
                       ENVIRONMENT "PLDRUN=$<TARGET_FILE:pldrun>;${PLD_MPI_TEST_ENV}")
else()
  message(STATUS "pldrun tests: no python3; python_api, python_pypto and python_subworker are not registered")
endif()
