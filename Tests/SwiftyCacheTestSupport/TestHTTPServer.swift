public import Foundation
import SwiftyCacheCore
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A small HTTP/1.1 server on 127.0.0.1 for end-to-end tests: serves pages set by the test,
/// answers conditional requests (`If-None-Match`, `If-Modified-Since`) with 304, and records
/// the requests it got. One connection per request (`Connection: close`).
public final class TestHTTPServer: Sendable {
    /// One page the server serves.
    public struct Page: Sendable {
        public var body: Data
        public var contentType: String
        public var status: Int
        public var etag: String?
        public var lastModified: String?
        /// Server-side latency, to keep a request in flight (not a test synchronisation).
        public var latency: Duration?
        /// More response headers, such as `Location` for a redirect.
        public var headers: [String: String] = [:]

        public init(
            _ body: String, contentType: String = "text/html; charset=utf-8", status: Int = 200, etag: String? = nil,
            lastModified: String? = nil, latency: Duration? = nil, headers: [String: String] = [:]
        ) {
            self.headers = headers
            self.body = Data(body.utf8)
            self.contentType = contentType
            self.status = status
            self.etag = etag
            self.lastModified = lastModified
            self.latency = latency
        }
    }

    /// A request as the server saw it.
    public struct Request: Sendable {
        public var path: String
        public var headers: [String: String]
        public var status: Int
    }

    private let pages = LockedState<[String: Page]>([:])
    private let log = LockedState<[Request]>([])
    private let arrivals = LockedState<[String: Int]>([:])
    private let listener: Int32
    /// Set once the listener is closed. Closing twice would close whatever descriptor reused the
    /// number meanwhile, in this test process where many suites run at once.
    private let isStopped = Atomic(false)
    /// The port it listens on.
    public let port: UInt16

    /// Starts listening on an ephemeral port of 127.0.0.1.
    public init() throws {
        #if os(Linux)
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
        let fd = socket(AF_INET, SOCK_STREAM, 0)  // a plain Int32 in Darwin's headers
        #endif
        guard fd >= 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
        var address = sockaddr_in()
        #if canImport(Darwin)
        address.sin_len = UInt8(MemoryLayout<sockaddr_in>.size)
        #endif
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { socketAddress in
                bind(fd, socketAddress, length) == 0 && listen(fd, 64) == 0
                    && getsockname(fd, socketAddress, &length) == 0
            }
        }
        guard bound else {
            close(fd)
            throw POSIXError(.init(rawValue: errno) ?? .EIO)
        }
        listener = fd
        port = UInt16(bigEndian: address.sin_port)
        let thread = Thread { [self] in acceptLoop() }
        thread.start()
    }

    deinit { stop() }

    /// `http://127.0.0.1:PORT` followed by `path`.
    public func url(_ path: String) -> URL {
        URL(string: "http://127.0.0.1:\(port)\(path)")!
    }

    public func setPage(_ path: String, _ page: Page) {
        pages.withLock { $0[path] = page }
    }

    public func removePage(_ path: String) {
        pages.withLock { $0[path] = nil }
    }

    /// The requests made for `path`, oldest first.
    /// Requests for `path` that arrived, answered or not (a slow page's are counted at once).
    public func arrivals(at path: String) -> Int {
        arrivals.withLock { $0[path] ?? 0 }
    }

    /// Replaces the body of a page with raw bytes (for other charsets).
    public func setPage(_ path: String, bytes: Data, contentType: String) {
        var page = Page("", contentType: contentType)
        page.body = bytes
        setPage(path, page)
    }

    public func requests(to path: String) -> [Request] {
        log.withLock { $0.filter { $0.path == path } }
    }

    /// Stops accepting connections; the port is closed.
    public func stop() {
        guard !isStopped.exchange(true, ordering: .acquiringAndReleasing) else { return }
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
    }

    private func acceptLoop() {
        while true {
            let connection = accept(listener, nil, nil)
            if connection < 0 {
                if errno == EINTR && !isStopped.load(ordering: .acquiring) { continue }
                return  // closed by stop()
            }
            let thread = Thread { [self] in handle(connection) }
            thread.start()
        }
    }

    private func handle(_ connection: Int32) {
        defer { close(connection) }
        var received = Data()
        var buffer = [UInt8](repeating: 0, count: 4096)
        while received.range(of: Data("\r\n\r\n".utf8)) == nil && received.count < 65_536 {
            let count = read(connection, &buffer, buffer.count)
            guard count > 0 else { return }
            received.append(contentsOf: buffer[0..<count])
        }
        let lines = String(decoding: received, as: UTF8.self).components(separatedBy: "\r\n")
        let requestLine = lines.first?.split(separator: " ") ?? []
        guard requestLine.count >= 2 else { return }
        let path = String(requestLine[1])
        var headers: [String: String] = [:]
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(
                in: .whitespaces)
        }
        let page = pages.withLock { $0[path] }
        var status = page?.status ?? 404
        var body = page?.body ?? Data("not found".utf8)
        var responseHeaders = ["Content-Type": page?.contentType ?? "text/plain"]
        for (name, value) in page?.headers ?? [:] { responseHeaders[name] = value }
        arrivals.withLock { $0[path, default: 0] += 1 }
        if let page, page.status == 200 {
            if let etag = page.etag { responseHeaders["ETag"] = etag }
            if let lastModified = page.lastModified { responseHeaders["Last-Modified"] = lastModified }
            let etagMatches = page.etag != nil && headers["if-none-match"] == page.etag
            let dateMatches = page.lastModified != nil && headers["if-modified-since"] == page.lastModified
            if etagMatches || (headers["if-none-match"] == nil && dateMatches) {
                status = 304
                body = Data()
            }
        }
        if let latency = page?.latency {
            Thread.sleep(
                forTimeInterval: Double(latency.components.seconds) + Double(latency.components.attoseconds) / 1e18)
        }
        log.withLock { $0.append(Request(path: path, headers: headers, status: status)) }
        var head = "HTTP/1.1 \(status) \(status == 200 ? "OK" : status == 304 ? "Not Modified" : "Error")\r\n"
        for (name, value) in responseHeaders { head += "\(name): \(value)\r\n" }
        head += "Content-Length: \(body.count)\r\nConnection: close\r\n\r\n"
        let response = Data(head.utf8) + body
        response.withUnsafeBytes { bytes in
            var offset = 0
            while offset < bytes.count {
                let written = write(connection, bytes.baseAddress! + offset, bytes.count - offset)
                if written <= 0 { return }
                offset += written
            }
        }
    }
}
