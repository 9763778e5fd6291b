import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The system SQLite, loaded at run time (`dlopen`), as the baseline users would pick instead
/// for small values. The package links nothing: without the library the rows say so.
///
/// The schema and settings are the ones a model layer would use: `kv(key TEXT PRIMARY KEY, v0
/// BLOB, v1 BLOB)`, WAL, `synchronous=NORMAL`, one transaction per statement (autocommit),
/// prepared statements.
final class SQLiteStore {
    private typealias OpenFunction =
        @convention(c) (
            UnsafePointer<CChar>, UnsafeMutablePointer<OpaquePointer?>
        ) -> Int32
    private typealias ExecFunction =
        @convention(c) (
            OpaquePointer?, UnsafePointer<CChar>, OpaquePointer?, OpaquePointer?, OpaquePointer?
        ) -> Int32
    private typealias PrepareFunction =
        @convention(c) (
            OpaquePointer?, UnsafePointer<CChar>, Int32, UnsafeMutablePointer<OpaquePointer?>, OpaquePointer?
        ) -> Int32
    private typealias BindTextFunction =
        @convention(c) (
            OpaquePointer?, Int32, UnsafePointer<CChar>, Int32, Int
        ) -> Int32
    private typealias BindBlobFunction =
        @convention(c) (
            OpaquePointer?, Int32, UnsafeRawPointer?, Int32, Int
        ) -> Int32
    private typealias StepFunction = @convention(c) (OpaquePointer?) -> Int32
    private typealias ColumnBlobFunction = @convention(c) (OpaquePointer?, Int32) -> UnsafeRawPointer?
    private typealias ColumnBytesFunction = @convention(c) (OpaquePointer?, Int32) -> Int32
    private typealias CloseFunction = @convention(c) (OpaquePointer?) -> Int32

    /// The library's functions, resolved once.
    private struct Library {
        let open: OpenFunction
        let exec: ExecFunction
        let prepare: PrepareFunction
        let bindText: BindTextFunction
        let bindBlob: BindBlobFunction
        let step: StepFunction
        let reset: StepFunction
        let finalize: StepFunction
        let columnBlob: ColumnBlobFunction
        let columnBytes: ColumnBytesFunction
        let close: CloseFunction
    }

    private static let library: Library? = {
        let names = ["libsqlite3.so.0", "libsqlite3.so", "libsqlite3.dylib", "/usr/lib/libsqlite3.dylib"]
        guard let handle = names.lazy.compactMap({ dlopen($0, RTLD_NOW) }).first else { return nil }
        func symbol<T>(_ name: String, as type: T.Type) -> T? {
            dlsym(handle, name).map { unsafeBitCast($0, to: type) }
        }
        guard let open = symbol("sqlite3_open", as: OpenFunction.self),
            let exec = symbol("sqlite3_exec", as: ExecFunction.self),
            let prepare = symbol("sqlite3_prepare_v2", as: PrepareFunction.self),
            let bindText = symbol("sqlite3_bind_text", as: BindTextFunction.self),
            let bindBlob = symbol("sqlite3_bind_blob", as: BindBlobFunction.self),
            let step = symbol("sqlite3_step", as: StepFunction.self),
            let reset = symbol("sqlite3_reset", as: StepFunction.self),
            let finalize = symbol("sqlite3_finalize", as: StepFunction.self),
            let columnBlob = symbol("sqlite3_column_blob", as: ColumnBlobFunction.self),
            let columnBytes = symbol("sqlite3_column_bytes", as: ColumnBytesFunction.self),
            let close = symbol("sqlite3_close", as: CloseFunction.self)
        else { return nil }
        return Library(
            open: open, exec: exec, prepare: prepare, bindText: bindText, bindBlob: bindBlob, step: step,
            reset: reset, finalize: finalize, columnBlob: columnBlob, columnBytes: columnBytes, close: close)
    }()

    /// Whether the system has a SQLite library to load.
    static var isAvailable: Bool { library != nil }

    /// `SQLITE_TRANSIENT`: SQLite copies the bound bytes.
    private static let transient = -1
    private static let done: Int32 = 101
    private static let row: Int32 = 100

    private let sqlite: Library
    private var database: OpaquePointer?
    private var insert: OpaquePointer?
    private var select: OpaquePointer?
    private var delete: OpaquePointer?
    let path: String

    /// Opens (creating) a database at `path` with the table, WAL and `synchronous=NORMAL` (or
    /// `FULL` with `durable`, SQLite's setting for commits that survive a power cut); `nil`
    /// when SQLite is not available or the database cannot be opened.
    init?(path: String, slots: Int, durable: Bool = false) {
        guard let sqlite = Self.library else { return nil }
        self.sqlite = sqlite
        self.path = path
        guard sqlite.open(path, &database) == 0 else { return nil }
        let columns = (0..<slots).map { "v\($0) BLOB" }.joined(separator: ", ")
        let placeholders = (0...slots).map { _ in "?" }.joined(separator: ", ")
        let setup = """
            PRAGMA journal_mode=WAL; PRAGMA synchronous=\(durable ? "FULL" : "NORMAL");
            CREATE TABLE IF NOT EXISTS kv(key TEXT PRIMARY KEY, \(columns));
            """
        guard sqlite.exec(database, setup, nil, nil, nil) == 0,
            sqlite.prepare(database, "INSERT OR REPLACE INTO kv VALUES(\(placeholders))", -1, &insert, nil) == 0,
            sqlite.prepare(
                database, "SELECT \((0..<slots).map { "v\($0)" }.joined(separator: ", ")) FROM kv WHERE key = ?", -1,
                &select, nil) == 0,
            sqlite.prepare(database, "DELETE FROM kv WHERE key = ?", -1, &delete, nil) == 0
        else { return nil }
    }

    deinit {
        for statement in [insert, select, delete] { _ = sqlite.finalize(statement) }
        _ = sqlite.close(database)
    }

    /// `INSERT OR REPLACE`, one transaction.
    func set(_ key: String, _ values: [Data]) {
        _ = sqlite.bindText(insert, 1, key, -1, Self.transient)
        for (index, value) in values.enumerated() {
            value.withUnsafeBytes {
                _ = sqlite.bindBlob(insert, Int32(index + 2), $0.baseAddress, Int32($0.count), Self.transient)
            }
        }
        _ = sqlite.step(insert)
        _ = sqlite.reset(insert)
    }

    /// Reads every slot; returns the bytes read, so the work cannot be optimized away.
    func get(_ key: String, slots: Int) -> Int {
        _ = sqlite.bindText(select, 1, key, -1, Self.transient)
        var total = 0
        if sqlite.step(select) == Self.row {
            for column in 0..<Int32(slots) {
                let count = Int(sqlite.columnBytes(select, column))
                if let bytes = sqlite.columnBlob(select, column) {
                    total += Data(bytes: bytes, count: count).count
                }
            }
        }
        _ = sqlite.reset(select)
        return total
    }

    /// Calls `body` with slot 0's bytes of `key`, if there is a row.
    func forEachBlob(_ key: String, _ body: (Data) -> Void) {
        _ = sqlite.bindText(select, 1, key, -1, Self.transient)
        if sqlite.step(select) == Self.row, let bytes = sqlite.columnBlob(select, 0) {
            body(Data(bytes: bytes, count: Int(sqlite.columnBytes(select, 0))))
        }
        _ = sqlite.reset(select)
    }

    func remove(_ key: String) {
        _ = sqlite.bindText(delete, 1, key, -1, Self.transient)
        _ = sqlite.step(delete)
        _ = sqlite.reset(delete)
    }

    /// Runs `sql` (a pragma, for instance).
    func execute(_ sql: String) {
        _ = sqlite.exec(database, sql, nil, nil, nil)
    }

    /// Runs `body` in one transaction (`BEGIN` … `COMMIT`).
    func transaction(_ body: () throws -> Void) rethrows {
        _ = sqlite.exec(database, "BEGIN", nil, nil, nil)
        try body()
        _ = sqlite.exec(database, "COMMIT", nil, nil, nil)
    }

    /// Folds the WAL into the database, so that its size counts as the database's.
    func checkpoint() {
        _ = sqlite.exec(database, "PRAGMA wal_checkpoint(TRUNCATE);", nil, nil, nil)
    }
}

/// Allocated bytes (`st_blocks` × 512) of a file or of everything below a folder.
func allocatedBytes(atPath path: String) -> Int {
    var info = stat()
    guard lstat(path, &info) == 0 else { return 0 }
    var total = Int(info.st_blocks) * 512
    if info.st_mode & S_IFMT == S_IFDIR, let names = try? FileManager.default.contentsOfDirectory(atPath: path) {
        for name in names { total += allocatedBytes(atPath: path + "/" + name) }
    }
    return total
}
