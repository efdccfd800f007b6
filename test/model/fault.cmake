# Tests of the analytic fault-tolerance model (MoFa eq. (36)-(44) and the renewal ETTR).
mofasim_add_test(fault_analytic_test SRCS ${CMAKE_CURRENT_SOURCE_DIR}/fault_analytic_test.cc DEPS mofasim::fault_model)
