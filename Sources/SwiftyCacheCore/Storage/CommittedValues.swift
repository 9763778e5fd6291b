/// The committed state of an entry an edit replaces: publishing keeps the slots it does not
/// rewrite, and retires the old values.
struct CommittedValues {
    var location: ValueLocation
    var lengths: SlotLengths
}
