/// The namespace of the slow suites (crash kills, the fault sweep, the journal fuzzer, the
/// stress runs), which also carry the `.slow` tag and the `.fullRunOnly` trait: they run with
/// `SWIFTYCACHE_FULL_TESTS=1 swift test`. Swift Testing's command line selects by test ID, so
/// the namespace is also what `SWIFTYCACHE_FULL_TESTS=1 swift test --filter Slow` matches.
enum Slow {}
