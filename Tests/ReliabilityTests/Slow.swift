/// The namespace of the slow suites (crash kills, the fault sweep, the journal fuzzer, the
/// stress runs), which also carry the `.slow` tag. Swift Testing's command line selects by test
/// ID, so the namespace is what `swift test --skip Slow` and `swift test --filter Slow` match.
enum Slow {}
