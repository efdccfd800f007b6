# Tests of the analytic fault-tolerance model (MoFa(36) MoFa(37) MoFa(38) MoFa(39) MoFa(40) MoFa(41)
# MoFa(42) MoFa(43) MoFa(44) and the renewal ETTR).
mofasim_add_test(fault_analytic_test SRCS ${CMAKE_CURRENT_SOURCE_DIR}/fault_analytic_test.cc DEPS mofasim::fault_model)
