/work/main/rust/kunit/.policy_kunit.o.d: /work/main/rust/kunit/policy_kunit.rs /work/main/rust/kunit/../policy/mod.rs /work/main/rust/kunit/../policy/eligibility.rs /work/main/rust/kunit/../policy/failover.rs /work/main/rust/kunit/../policy/hash.rs /work/main/rust/kunit/../policy/knobs.rs /work/main/rust/kunit/../policy/placement.rs /work/main/rust/kunit/../policy/selfcheck.rs /work/main/rust/kunit/../policy/wrr.rs ./rust/libcore.rmeta ./rust/libkernel.rmeta ./rust/libffi.rmeta ./rust/libcompiler_builtins.rmeta ./rust/libmacros.so ./rust/libbindings.rmeta ./rust/libuapi.rmeta ./rust/libbuild_error.rmeta

/work/main/rust/kunit/policy_kunit.o: /work/main/rust/kunit/policy_kunit.rs /work/main/rust/kunit/../policy/mod.rs /work/main/rust/kunit/../policy/eligibility.rs /work/main/rust/kunit/../policy/failover.rs /work/main/rust/kunit/../policy/hash.rs /work/main/rust/kunit/../policy/knobs.rs /work/main/rust/kunit/../policy/placement.rs /work/main/rust/kunit/../policy/selfcheck.rs /work/main/rust/kunit/../policy/wrr.rs ./rust/libcore.rmeta ./rust/libkernel.rmeta ./rust/libffi.rmeta ./rust/libcompiler_builtins.rmeta ./rust/libmacros.so ./rust/libbindings.rmeta ./rust/libuapi.rmeta ./rust/libbuild_error.rmeta

/work/main/rust/kunit/policy_kunit.rs:
/work/main/rust/kunit/../policy/mod.rs:
/work/main/rust/kunit/../policy/eligibility.rs:
/work/main/rust/kunit/../policy/failover.rs:
/work/main/rust/kunit/../policy/hash.rs:
/work/main/rust/kunit/../policy/knobs.rs:
/work/main/rust/kunit/../policy/placement.rs:
/work/main/rust/kunit/../policy/selfcheck.rs:
/work/main/rust/kunit/../policy/wrr.rs:
./rust/libcore.rmeta:
./rust/libkernel.rmeta:
./rust/libffi.rmeta:
./rust/libcompiler_builtins.rmeta:
./rust/libmacros.so:
./rust/libbindings.rmeta:
./rust/libuapi.rmeta:
./rust/libbuild_error.rmeta:
