import Foundation
import CIAPFrame
import IAPBridge
import IAPCore
import Testing

/// C8, the bad-input matrix: every entry point of include/iap_bridge.h ×
/// every kind of bad input. Each cell either lists probes (a call and the code
/// the header documents for it) or says why the kind does not apply. A probe
/// must not crash, must answer its code with an iap_errmsg naming the
/// function, and (unless it is a legitimate success that stores a result)
/// must leave the outbox file and its live records exactly as they were.
/// `headerAndTableAgree` fails when the header gains an entry point the table
/// lacks, so a new function cannot be forgotten.
@Suite("Bad-input matrix")
struct BadInputMatrixTests {
    enum Kind: String, CaseIterable {
        case null = "NULL"
        case empty = "empty string"
        case invalidUTF8 = "invalid UTF-8"
        case huge = "1 MB string"
        case unknownID = "unknown ID"
        case beforeOpen = "before open (handle never from iap_open)"
        case afterClose = "after close"
        case doubleClose = "double close"
        case negativeKey = "negative key"
        case duplicateKey = "duplicate key"
    }

    /// What a probe must answer.
    enum Expect {
        case code(Int32)
        /// iap_poll: NULL, with iap_errmsg naming iap_poll and containing this.
        case nullWithMessage(String)
        /// A string result (iap_error_name).
        case text(String)
        /// No result to check beyond not crashing (iap_free(NULL)).
        case nothing
    }

    /// The open bridge each probe starts from: one unconfirmed purchase
    /// (`liveKey`), its "7" already polled.
    final class Fixture {
        let scratch = Scratch("matrix")
        var bridge: CBridge
        let liveKey: Int64 = 1_700_000_001_000  // a wall clock's click: its own key

        init() throws {
            bridge = try CBridge.open(scratch.config())
            _ = try bridge.buy("coins_100", liveKey)
            _ = bridge.drain()
        }
        var h: OpaquePointer? { bridge.handle }
        var outboxPath: String { scratch.dataDir + "/" + Outbox.fileName }
        func close() { bridge.close() }
        deinit { _ = iap_close(bridge.handle) }
    }

    struct Probe {
        let label: String
        let expect: Expect
        /// A legitimate success that stores a result (e.g. click <= 0 buys
        /// with an SDK key): the outbox may change.
        var mutates = false
        /// Runs before the outbox snapshot (e.g. the first of two closes).
        var setup: (Fixture) -> Void = { _ in }
        let call: (Fixture) -> Int32
    }

    enum Cell {
        case probes([Probe])
        case notApplicable(String)
    }

    struct EntryPoint {
        let name: String
        let cells: [Kind: Cell]
    }

    // MARK: Handles and strings

    /// A handle that never came from iap_open: a generation never issued.
    static var neverIssued: OpaquePointer? { OpaquePointer(bitPattern: UInt(1) << 52 | 5) }
    static let megabyte = String(repeating: "a", count: 1 << 20)
    static let invalidUTF8: [UInt8] = [0x5B, 0x22, 0xFF, 0xFE, 0x22, 0x5D]  // ["\xFF\xFE"]

    static func withBytes<T>(_ b: [UInt8], _ body: (UnsafePointer<CChar>) -> T) -> T {
        (b + [0]).withUnsafeBufferPointer { p in p.baseAddress!.withMemoryRebound(to: CChar.self, capacity: p.count) { body($0) } }
    }

    static func closed(_ f: Fixture) { f.close() }
    static func closedTwice(_ f: Fixture) {
        f.close()
        _ = iap_close(f.h)
    }

    /// The three handle cells every function taking a bridge has.
    static func handleCells(_ call: @escaping (OpaquePointer?) -> Int32) -> [Kind: Cell] {
        [
            .beforeOpen: .probes([
                Probe(label: "generation never issued", expect: .code(-7)) { _ in call(neverIssued) },
                Probe(label: "address of a C object", expect: .code(-7)) { _ in
                    var x = 0
                    return withUnsafeMutablePointer(to: &x) { call(OpaquePointer($0)) }
                },
            ]),
            .afterClose: .probes([Probe(label: "closed bridge", expect: .code(-8), setup: closed) { f in call(f.h) }]),
            .doubleClose: .probes([Probe(label: "closed twice", expect: .code(-8), setup: closedTwice) { f in call(f.h) }]),
        ]
    }

    static func merge(_ a: [Kind: Cell], _ b: [Kind: Cell]) -> [Kind: Cell] { a.merging(b) { x, _ in x } }

    static func na(_ kinds: [Kind], _ why: String) -> [Kind: Cell] {
        Dictionary(uniqueKeysWithValues: kinds.map { ($0, Cell.notApplicable(why)) })
    }

    // MARK: The table

    static var table: [EntryPoint] { [
        EntryPoint(name: "iap_version", cells: na(Kind.allCases, "takes no argument; returns static IAP_VERSION_STRING (checked in headerIsTheOneSource)")),
        EntryPoint(name: "iap_version_number", cells: na(Kind.allCases, "takes no argument; returns IAP_VERSION_NUMBER (checked in headerIsTheOneSource)")),
        EntryPoint(name: "iap_launch", cells: na(Kind.allCases, "takes no argument and no bridge; without StoreKit answers IAP_E_NOT_SUPPORTED with a sentence, every time (checked in launchWithoutStoreKit)")),
        EntryPoint(name: "iap_errmsg", cells: na(Kind.allCases, "takes no argument; never NULL (checked in noArgumentFunctions)")),
        EntryPoint(name: "iap_error_name", cells: merge([
            .negativeKey: .probes([
                Probe(label: "-999", expect: .text("IAP_E_UNKNOWN_CODE")) { _ in -999 },
                Probe(label: "Int32.min", expect: .text("IAP_E_UNKNOWN_CODE")) { _ in Int32.min },
                Probe(label: "-16", expect: .text("IAP_E_INTERNAL")) { _ in -16 },
            ]),
            .unknownID: .probes([Probe(label: "Int32.max", expect: .text("IAP_E_UNKNOWN_CODE")) { _ in Int32.max }]),
        ], na([.null, .empty, .invalidUTF8, .huge, .beforeOpen, .afterClose, .doubleClose, .duplicateKey],
              "takes only an int32 code"))),
        EntryPoint(name: "iap_free", cells: merge([
            .null: .probes([Probe(label: "iap_free(NULL)", expect: .nothing) { _ in iap_free(nil); return 0 }]),
        ], na([.empty, .invalidUTF8, .huge, .unknownID, .beforeOpen, .afterClose, .doubleClose, .negativeKey, .duplicateKey],
              "like free(): any pointer other than NULL or one the SDK returned is undefined behaviour, as the header says"))),
        EntryPoint(name: "iap_open", cells: [
            .null: .probes([
                Probe(label: "config_json NULL", expect: .code(-1)) { _ in var h: OpaquePointer? = nil; return iap_open(nil, &h) },
                Probe(label: "out NULL", expect: .code(-1)) { f in Scratch("open-null").config().withCString { iap_open($0, nil) } },
            ]),
            .empty: .probes([Probe(label: "\"\" (empty JSON text does not parse)", expect: .code(-3)) { _ in
                var h: OpaquePointer? = nil; return iap_open("", &h) }]),
            .invalidUTF8: .probes([Probe(label: "bytes FF FE inside a JSON string (does not parse)", expect: .code(-3)) { _ in
                var h: OpaquePointer? = nil; return withBytes(invalidUTF8) { iap_open($0, &h) } }]),
            .huge: .probes([Probe(label: "1 MB", expect: .code(-2)) { _ in var h: OpaquePointer? = nil; return iap_open(megabyte, &h) }]),
            .unknownID: .probes([
                Probe(label: "\"store\": \"nope\"", expect: .code(-4)) { f in
                    var h: OpaquePointer? = nil
                    return #"{"store":"nope","dataDir":"/nonexistent-iap","catalog":"x"}"#.withCString { iap_open($0, &h) }
                },
                Probe(label: "catalog file that does not exist", expect: .code(-5)) { _ in
                    let s = Scratch("open-cat")
                    var h: OpaquePointer? = nil
                    return s.config(catalog: s.path + "/missing.storekit").withCString { iap_open($0, &h) }
                },
            ]),
            .beforeOpen: .notApplicable("iap_open is what creates a bridge"),
            .afterClose: .notApplicable("opening again after a close is the normal flow (BridgeFlowTests)"),
            .doubleClose: .notApplicable("iap_open takes no bridge"),
            .negativeKey: .probes([Probe(label: "\"tickMs\": -1", expect: .code(-4)) { _ in
                let s = Scratch("open-neg")
                var h: OpaquePointer? = nil
                return s.config(tickMs: -1).withCString { iap_open($0, &h) }
            }]),
            .duplicateKey: .probes([
                Probe(label: "the fixture's dataDir, still open", expect: .code(-9)) { f in
                    var h: OpaquePointer? = nil
                    return f.scratch.config().withCString { iap_open($0, &h) }
                },
                Probe(label: "a key given twice", expect: .code(-3)) { f in
                    var h: OpaquePointer? = nil
                    return #"{"store":"simulator","store":"simulator"}"#.withCString { iap_open($0, &h) }
                },
            ]),
        ]),
        EntryPoint(name: "iap_close", cells: merge(merge([
            .null: .probes([Probe(label: "NULL bridge", expect: .code(-7)) { _ in iap_close(nil) }]),
        ], handleCells { iap_close($0) }), na([.empty, .invalidUTF8, .huge, .unknownID, .negativeKey, .duplicateKey], "takes only a bridge"))),
        EntryPoint(name: "iap_request_products", cells: merge(merge([
            .null: .probes([
                Probe(label: "product_ids_json NULL", expect: .code(-1)) { f in iap_request_products(f.h, nil) },
                Probe(label: "NULL bridge", expect: .code(-7)) { _ in iap_request_products(nil, "[]") },
            ]),
            .empty: .probes([Probe(label: "\"\"", expect: .code(-3)) { f in iap_request_products(f.h, "") }]),
            .invalidUTF8: .probes([Probe(label: "[\"FF FE\"] (does not parse)", expect: .code(-3)) { f in withBytes(invalidUTF8) { iap_request_products(f.h, $0) } }]),
            .huge: .probes([Probe(label: "1 MB", expect: .code(-2)) { f in iap_request_products(f.h, megabyte) }]),
            .unknownID: .probes([Probe(label: "[\"no_such_product\"] (answered in \"invalid\")", expect: .code(0)) { f in
                iap_request_products(f.h, #"["no_such_product"]"#) }]),
            .duplicateKey: .probes([Probe(label: "the same ID twice", expect: .code(0)) { f in
                iap_request_products(f.h, #"["coins_100","coins_100"]"#) }]),
        ], handleCells { iap_request_products($0, "[]") }), na([.negativeKey], "takes no key"))),
        EntryPoint(name: "iap_buy", cells: merge([
            .null: .probes([
                Probe(label: "product_id NULL", expect: .code(-1)) { f in var k: Int64 = 7; return iap_buy(f.h, nil, 1, &k) },
                Probe(label: "NULL bridge", expect: .code(-7)) { _ in var k: Int64 = 7; return iap_buy(nil, "coins_100", 1, &k) },
            ]),
            .empty: .probes([Probe(label: "\"\"", expect: .code(-2)) { f in var k: Int64 = 7; return iap_buy(f.h, "", 1, &k) }]),
            .invalidUTF8: .probes([Probe(label: "FF FE", expect: .code(-2)) { f in
                var k: Int64 = 7; return withBytes([0xFF, 0xFE]) { iap_buy(f.h, $0, 1, &k) } }]),
            .huge: .probes([Probe(label: "1 MB", expect: .code(-2)) { f in var k: Int64 = 7; return iap_buy(f.h, megabyte, 1, &k) }]),
            .unknownID: .probes([Probe(label: "no_such_product", expect: .code(-10)) { f in
                var k: Int64 = 7; return iap_buy(f.h, "no_such_product", 1, &k) }]),
            .negativeKey: .probes([
                Probe(label: "click -5: the SDK picks a key (documented), a result is stored", expect: .code(0), mutates: true) { f in
                    var k: Int64 = 0
                    let rc = iap_buy(f.h, "coins_100", -5, &k)
                    #expect(k > 0 && k != f.liveKey, "an SDK key is positive and unused")
                    return rc
                },
                Probe(label: "click Int64.min, out_key NULL", expect: .code(0), mutates: true) { f in iap_buy(f.h, "coins_100", Int64.min, nil) },
            ]),
            .duplicateKey: .probes([Probe(label: "the live key: replaced by a fresh key (documented, C7)", expect: .code(0),
                                          mutates: true) { f in
                var k: Int64 = 7
                let rc = iap_buy(f.h, "remove_ads", f.liveKey, &k)
                #expect(k > f.liveKey, "a used click key is replaced by one above every key handed out")
                return rc
            }]),
        ], handleCells { h in var k: Int64 = 7; return iap_buy(h, "coins_100", 1, &k) })),
        EntryPoint(name: "iap_buy_quantity", cells: merge([
            .null: .probes([
                Probe(label: "product_id NULL", expect: .code(-1)) { f in var k: Int64 = 7; return iap_buy_quantity(f.h, nil, 2, 1, &k) },
                Probe(label: "NULL bridge", expect: .code(-7)) { _ in var k: Int64 = 7; return iap_buy_quantity(nil, "coins_100", 2, 1, &k) },
            ]),
            .empty: .probes([Probe(label: "\"\"", expect: .code(-2)) { f in var k: Int64 = 7; return iap_buy_quantity(f.h, "", 2, 1, &k) }]),
            .invalidUTF8: .probes([Probe(label: "FF FE", expect: .code(-2)) { f in
                var k: Int64 = 7; return withBytes([0xFF, 0xFE]) { iap_buy_quantity(f.h, $0, 2, 1, &k) } }]),
            .huge: .probes([
                Probe(label: "1 MB ID", expect: .code(-2)) { f in var k: Int64 = 7; return iap_buy_quantity(f.h, megabyte, 2, 1, &k) },
                Probe(label: "quantity 11 (the App Store's limit is 10)", expect: .code(-2)) { f in
                    var k: Int64 = 7; return iap_buy_quantity(f.h, "coins_100", 11, 1, &k) },
                Probe(label: "quantity 2 of a non-consumable", expect: .code(-2)) { f in
                    var k: Int64 = 7; return iap_buy_quantity(f.h, "remove_ads", 2, 1, &k) },
            ]),
            .unknownID: .probes([Probe(label: "no_such_product", expect: .code(-10)) { f in
                var k: Int64 = 7; return iap_buy_quantity(f.h, "no_such_product", 2, 1, &k) }]),
            .negativeKey: .probes([
                Probe(label: "quantity 0", expect: .code(-2)) { f in var k: Int64 = 7; return iap_buy_quantity(f.h, "coins_100", 0, 1, &k) },
                Probe(label: "quantity -3", expect: .code(-2)) { f in var k: Int64 = 7; return iap_buy_quantity(f.h, "coins_100", -3, 1, &k) },
                Probe(label: "click -5, 3 units: an SDK key", expect: .code(0), mutates: true) { f in
                    var k: Int64 = 0; let rc = iap_buy_quantity(f.h, "coins_100", 3, -5, &k); #expect(k > 0); return rc },
            ]),
            .duplicateKey: .probes([Probe(label: "the live key: replaced by a fresh key", expect: .code(0), mutates: true) { f in
                var k: Int64 = 7
                let rc = iap_buy_quantity(f.h, "coins_100", 2, f.liveKey, &k)
                #expect(k > f.liveKey)
                return rc
            }]),
        ], handleCells { h in var k: Int64 = 7; return iap_buy_quantity(h, "coins_100", 2, 1, &k) })),
        EntryPoint(name: "iap_confirm", cells: merge(merge([
            .null: .probes([Probe(label: "NULL bridge", expect: .code(-7)) { _ in iap_confirm(nil, 1000) }]),
            .unknownID: .probes([Probe(label: "key never issued", expect: .code(-12)) { f in iap_confirm(f.h, 424_242) }]),
            .negativeKey: .probes([
                Probe(label: "-1", expect: .code(-12)) { f in iap_confirm(f.h, -1) },
                Probe(label: "Int64.min", expect: .code(-12)) { f in iap_confirm(f.h, Int64.min) },
            ]),
            .duplicateKey: .probes([Probe(label: "second confirm of the same key", expect: .code(-12),
                                          setup: { f in #expect(iap_confirm(f.h, f.liveKey) == 0); _ = iap_flush(f.h) }) { f in
                iap_confirm(f.h, f.liveKey) }]),
        ], handleCells { iap_confirm($0, 1000) }), na([.empty, .invalidUTF8, .huge], "takes no string"))),
        EntryPoint(name: "iap_restore", cells: merge(merge([
            .null: .probes([Probe(label: "NULL bridge", expect: .code(-7)) { _ in iap_restore(nil) }]),
        ], handleCells { iap_restore($0) }), na([.empty, .invalidUTF8, .huge, .unknownID, .negativeKey, .duplicateKey], "takes only a bridge"))),
        EntryPoint(name: "iap_poll", cells: merge([
            .null: .probes([Probe(label: "NULL bridge", expect: .nullWithMessage("NULL")) { _ in pollCode(nil) }]),
            .beforeOpen: .probes([Probe(label: "generation never issued", expect: .nullWithMessage("not a bridge")) { _ in pollCode(neverIssued) }]),
            .afterClose: .probes([Probe(label: "closed bridge", expect: .nullWithMessage("closed"), setup: closed) { f in pollCode(f.h) }]),
            .doubleClose: .probes([Probe(label: "closed twice", expect: .nullWithMessage("closed"), setup: closedTwice) { f in pollCode(f.h) }]),
        ], na([.empty, .invalidUTF8, .huge, .unknownID, .negativeKey, .duplicateKey], "takes only a bridge"))),
        EntryPoint(name: "iap_set_callback", cells: merge(merge([
            .null: .probes([
                Probe(label: "NULL bridge", expect: .code(-7)) { _ in iap_set_callback(nil, nil, nil) },
                Probe(label: "cb NULL: back to polling (documented)", expect: .code(0)) { f in iap_set_callback(f.h, nil, nil) },
            ]),
        ], handleCells { iap_set_callback($0, nil, nil) }), na([.empty, .invalidUTF8, .huge, .unknownID, .negativeKey, .duplicateKey],
                                                               "takes a bridge, a function and an opaque context"))),
        EntryPoint(name: "iap_simulator", cells: merge([
            .null: .probes([
                Probe(label: "command_json NULL", expect: .code(-1)) { f in var o: UnsafeMutablePointer<CChar>? = nil; return iap_simulator(f.h, nil, &o) },
                Probe(label: "out_json NULL", expect: .code(-1)) { f in iap_simulator(f.h, #"{"op":"clock"}"#, nil) },
                Probe(label: "NULL bridge", expect: .code(-7)) { _ in var o: UnsafeMutablePointer<CChar>? = nil; return iap_simulator(nil, #"{"op":"clock"}"#, &o) },
            ]),
            .empty: .probes([Probe(label: "\"\"", expect: .code(-3)) { f in sim(f, "") }]),
            .invalidUTF8: .probes([Probe(label: "FF FE inside a string (does not parse)", expect: .code(-3)) { f in
                var o: UnsafeMutablePointer<CChar>? = nil
                return withBytes(Array(#"{"op":""#.utf8) + [0xFF, 0xFE] + Array(#""}"#.utf8)) { iap_simulator(f.h, $0, &o) }
            }]),
            .huge: .probes([Probe(label: "1 MB", expect: .code(-2)) { f in sim(f, megabyte) }]),
            .unknownID: .probes([
                Probe(label: "unknown op", expect: .code(-14)) { f in sim(f, #"{"op":"no_such_op"}"#) },
                Probe(label: "refund of an unknown transaction", expect: .code(-15)) { f in sim(f, #"{"op":"refund","transactionID":"999"}"#) },
                Probe(label: "approve of an unknown pending purchase", expect: .code(-15)) { f in sim(f, #"{"op":"approve","id":"p999"}"#) },
                Probe(label: "external purchase of an unknown product", expect: .code(-10)) { f in
                    sim(f, #"{"op":"external_purchase","productID":"no_such_product"}"#) },
            ]),
            .negativeKey: .probes([Probe(label: "advance -1 seconds", expect: .code(-3)) { f in sim(f, #"{"op":"advance","seconds":-1}"#) }]),
            .duplicateKey: .probes([
                Probe(label: "second refund of the same transaction", expect: .code(-2), setup: { f in
                    let t = try! f.bridge.simulator(#"{"op":"transactions"}"#)["transactions"]!.arrayValue!.first!["transactionID"]!.stringValue!
                    _ = try! f.bridge.simulator(#"{"op":"refund","transactionID":"\#(t)"}"#)
                    _ = f.bridge.drain()
                }) { f in
                    let t = try! f.bridge.simulator(#"{"op":"transactions"}"#)["transactions"]!.arrayValue!.first!["transactionID"]!.stringValue!
                    return sim(f, #"{"op":"refund","transactionID":"\#(t)"}"#)
                },
                Probe(label: "\"op\" given twice", expect: .code(-3)) { f in sim(f, #"{"op":"clock","op":"clock"}"#) },
            ]),
        ], handleCells { h in var o: UnsafeMutablePointer<CChar>? = nil; return iap_simulator(h, #"{"op":"clock"}"#, &o) })),
        EntryPoint(name: "iap_flush", cells: merge(merge([
            .null: .probes([Probe(label: "NULL bridge", expect: .code(-7)) { _ in iap_flush(nil) }]),
        ], handleCells { iap_flush($0) }), na([.empty, .invalidUTF8, .huge, .unknownID, .negativeKey, .duplicateKey], "takes only a bridge"))),
        EntryPoint(name: "iap_subscription_status", cells: merge(merge([
            .null: .probes([
                Probe(label: "product_ids_json NULL: every group (documented)", expect: .code(0)) { f in iap_subscription_status(f.h, nil) },
                Probe(label: "NULL bridge", expect: .code(-7)) { _ in iap_subscription_status(nil, "[]") },
            ]),
            .empty: .probes([
                Probe(label: "\"\"", expect: .code(-3)) { f in iap_subscription_status(f.h, "") },
                Probe(label: "[\"\"]", expect: .code(-2)) { f in iap_subscription_status(f.h, #"[""]"#) },
            ]),
            .invalidUTF8: .probes([Probe(label: "FF FE (does not parse)", expect: .code(-3)) { f in
                withBytes(invalidUTF8) { iap_subscription_status(f.h, $0) } }]),
            .huge: .probes([Probe(label: "1 MB", expect: .code(-2)) { f in iap_subscription_status(f.h, megabyte) }]),
            .unknownID: .probes([Probe(label: "[\"no_such_product\"] (answered in \"invalid\")", expect: .code(0)) { f in
                iap_subscription_status(f.h, #"["no_such_product"]"#) }]),
            .duplicateKey: .probes([Probe(label: "the same ID twice: one group", expect: .code(0)) { f in
                iap_subscription_status(f.h, #"["vip_monthly","vip_monthly"]"#) }]),
        ], handleCells { iap_subscription_status($0, nil) }), na([.negativeKey], "takes no key"))),
        EntryPoint(name: "iap_app_transaction", cells: merge(merge([
            .null: .probes([Probe(label: "NULL bridge", expect: .code(-7)) { _ in iap_app_transaction(nil) }]),
        ], handleCells { iap_app_transaction($0) }), na([.empty, .invalidUTF8, .huge, .unknownID, .negativeKey, .duplicateKey], "takes only a bridge"))),
        EntryPoint(name: "iap_manage_subscriptions", cells: merge(merge([
            .null: .probes([Probe(label: "NULL bridge", expect: .code(-7)) { _ in iap_manage_subscriptions(nil) }]),
        ], handleCells { iap_manage_subscriptions($0) }), na([.empty, .invalidUTF8, .huge, .unknownID, .negativeKey, .duplicateKey], "takes only a bridge"))),
        EntryPoint(name: "iap_manage_subscription_group", cells: merge(merge([
            .null: .probes([
                Probe(label: "group_id NULL", expect: .code(-1)) { f in iap_manage_subscription_group(f.h, nil) },
                Probe(label: "NULL bridge", expect: .code(-7)) { _ in iap_manage_subscription_group(nil, "6A0000A0") },
            ]),
            .empty: .probes([Probe(label: "\"\"", expect: .code(-2)) { f in iap_manage_subscription_group(f.h, "") }]),
            .invalidUTF8: .probes([Probe(label: "FF FE", expect: .code(-2)) { f in
                withBytes([0xFF, 0xFE]) { iap_manage_subscription_group(f.h, $0) } }]),
            .huge: .probes([Probe(label: "1 MB", expect: .code(-2)) { f in iap_manage_subscription_group(f.h, megabyte) }]),
            .unknownID: .probes([Probe(label: "a group the catalog does not have", expect: .code(-2)) { f in
                iap_manage_subscription_group(f.h, "no_such_group") }]),
        ], handleCells { iap_manage_subscription_group($0, "6A0000A0") }), na([.negativeKey, .duplicateKey], "takes a group ID, no key"))),
        EntryPoint(name: "iap_buy_offer", cells: merge([
            .null: .probes([
                Probe(label: "offer_id NULL", expect: .code(-1)) { f in var k: Int64 = 7; return iap_buy_offer(f.h, "vip_monthly", nil, 1, &k) },
                Probe(label: "product_id NULL", expect: .code(-1)) { f in var k: Int64 = 7; return iap_buy_offer(f.h, nil, "wb", 1, &k) },
                Probe(label: "NULL bridge", expect: .code(-7)) { _ in var k: Int64 = 7; return iap_buy_offer(nil, "vip_monthly", "wb", 1, &k) },
            ]),
            .empty: .probes([
                Probe(label: "offer \"\"", expect: .code(-2)) { f in var k: Int64 = 7; return iap_buy_offer(f.h, "vip_monthly", "", 1, &k) },
                Probe(label: "product \"\"", expect: .code(-2)) { f in var k: Int64 = 7; return iap_buy_offer(f.h, "", "wb", 1, &k) },
            ]),
            .invalidUTF8: .probes([Probe(label: "offer FF FE", expect: .code(-2)) { f in
                var k: Int64 = 7; return withBytes([0xFF, 0xFE]) { iap_buy_offer(f.h, "vip_monthly", $0, 1, &k) } }]),
            .huge: .probes([Probe(label: "1 MB offer", expect: .code(-2)) { f in
                var k: Int64 = 7; return iap_buy_offer(f.h, "vip_monthly", megabyte, 1, &k) }]),
            .unknownID: .probes([
                Probe(label: "no_such_product", expect: .code(-10)) { f in var k: Int64 = 7; return iap_buy_offer(f.h, "no_such_product", "wb", 1, &k) },
                Probe(label: "an offer the player may not take: a \"7\" failure, nothing charged", expect: .code(0), mutates: true) { f in
                    var k: Int64 = 0; return iap_buy_offer(f.h, "vip_monthly", "no_such_offer", 1, &k) },
            ]),
            .negativeKey: .probes([Probe(label: "click -5: the SDK picks a key", expect: .code(0), mutates: true) { f in
                var k: Int64 = 0
                let rc = iap_buy_offer(f.h, "vip_monthly", "no_such_offer", -5, &k)
                #expect(k > 0 && k != f.liveKey, "an SDK key is positive and unused")
                return rc
            }]),
            .duplicateKey: .probes([Probe(label: "the live key: replaced by a fresh key (C7)", expect: .code(0), mutates: true) { f in
                var k: Int64 = 7
                let rc = iap_buy_offer(f.h, "vip_monthly", "no_such_offer", f.liveKey, &k)
                #expect(k > f.liveKey)
                return rc
            }]),
        ], handleCells { h in var k: Int64 = 7; return iap_buy_offer(h, "vip_monthly", "wb", 1, &k) })),
        EntryPoint(name: "iap_request_refund", cells: merge([
            .null: .probes([
                Probe(label: "transaction_id NULL", expect: .code(-1)) { f in iap_request_refund(f.h, nil) },
                Probe(label: "NULL bridge", expect: .code(-7)) { _ in iap_request_refund(nil, "1") },
            ]),
            .empty: .probes([Probe(label: "\"\"", expect: .code(-2)) { f in iap_request_refund(f.h, "") }]),
            .invalidUTF8: .probes([Probe(label: "FF FE", expect: .code(-2)) { f in withBytes([0xFF, 0xFE]) { iap_request_refund(f.h, $0) } }]),
            .huge: .probes([
                Probe(label: "1 MB", expect: .code(-2)) { f in iap_request_refund(f.h, megabyte) },
                Probe(label: "above UInt64", expect: .code(-2)) { f in iap_request_refund(f.h, "99999999999999999999") },
            ]),
            .unknownID: .probes([Probe(label: "no such transaction (a \"sheet\" with outcome error)", expect: .code(0)) { f in
                iap_request_refund(f.h, "123") }]),
            .negativeKey: .probes([Probe(label: "\"-5\"", expect: .code(-2)) { f in iap_request_refund(f.h, "-5") }]),
        ], handleCells { iap_request_refund($0, "123") }).merging(na([.duplicateKey], "a second request is answered by the store (tested in StoreSheetsTests)")) { x, _ in x }),
        EntryPoint(name: "iap_redeem_offer_code", cells: merge(merge([
            .null: .probes([Probe(label: "NULL bridge", expect: .code(-7)) { _ in iap_redeem_offer_code(nil) }]),
        ], handleCells { iap_redeem_offer_code($0) }), na([.empty, .invalidUTF8, .huge, .unknownID, .negativeKey, .duplicateKey], "takes only a bridge"))),
        EntryPoint(name: "iap_show_store_messages", cells: merge(merge([
            .null: .probes([Probe(label: "NULL bridge", expect: .code(-7)) { _ in iap_show_store_messages(nil) }]),
        ], handleCells { iap_show_store_messages($0) }), na([.empty, .invalidUTF8, .huge, .unknownID, .negativeKey, .duplicateKey], "takes only a bridge"))),
    ] }

    static func sim(_ f: Fixture, _ command: String) -> Int32 {
        var o: UnsafeMutablePointer<CChar>? = UnsafeMutablePointer(bitPattern: 0x10)
        let rc = command.withCString { iap_simulator(f.h, $0, &o) }
        if rc != 0 { #expect(o == nil, "*out_json is NULL on error") } else { iap_free(o) }
        return rc
    }

    /// iap_poll has no code: NULL plus a message is its error answer (1 = it returned a message).
    static func pollCode(_ h: OpaquePointer?) -> Int32 {
        guard let m = iap_poll(h) else { return 0 }
        iap_free(m)
        return 1
    }

    // MARK: Checks

    /// The live records of an outbox file, read independently of the bridge.
    static func liveRecords(_ path: String) -> [OutboxRecord] {
        guard let bytes = contents(path) else { return [] }
        var live: [UInt64: OutboxRecord] = [:]
        for p in RecordFrame.scan(bytes).records {
            switch OutboxEntry.decode(p) {
            case .put(let r): live[r.id] = r
            case .confirm(let ids): for id in ids { live[id] = nil }
            default: break
            }
        }
        return live.keys.sorted().map { live[$0]! }
    }

    @Test("every entry point × every bad input answers its documented code, names itself, and leaves the outbox alone")
    func matrix() throws {
        var probes = 0
        var notApplicable = 0
        let table = Self.table
        for ep in table {
            for kind in Kind.allCases {
                guard let cell = ep.cells[kind] else {
                    Issue.record("\(ep.name) has no cell for \(kind.rawValue)")
                    continue
                }
                guard case .probes(let list) = cell else {
                    notApplicable += 1
                    continue
                }
                for probe in list {
                    probes += 1
                    try run(ep.name, kind, probe)
                }
            }
        }
        print("bad-input matrix: \(table.count) entry points × \(Kind.allCases.count) kinds: \(probes) probes, \(notApplicable) cells not applicable (each with its reason in the table)")
        #expect(probes >= 60)
    }

    func run(_ function: String, _ kind: Kind, _ probe: Probe) throws {
        let f = try Fixture()
        probe.setup(f)
        let where_ = "\(function) × \(kind.rawValue) [\(probe.label)]"
        let beforeBytes = contents(f.outboxPath)
        let beforeLive = Self.liveRecords(f.outboxPath)
        // A known message, so the check below sees this call's own.
        _ = iap_confirm(nil, 0)
        switch probe.expect {
        case .code(let expected):
            let rc = probe.call(f)
            #expect(rc == expected, "\(where_): got \(String(cString: iap_error_name(rc))) (\(rc)), expected \(String(cString: iap_error_name(expected)))")
            if expected != 0 {
                let msg = lastError()
                #expect(msg.hasPrefix(function + ": ") && msg.count > function.count + 10, "\(where_): iap_errmsg is \"\(msg)\"")
            }
        case .nullWithMessage(let part):
            let got = probe.call(f)
            #expect(got == 0, "\(where_): returned a message")
            let msg = lastError()
            #expect(msg.hasPrefix(function + ": ") && msg.contains(part), "\(where_): iap_errmsg is \"\(msg)\"")
        case .text(let expected):
            let code = probe.call(f)
            #expect(String(cString: iap_error_name(code)) == expected, "\(where_)")
        case .nothing:
            _ = probe.call(f)
        }
        if !probe.mutates {
            #expect(contents(f.outboxPath) == beforeBytes, "\(where_): the outbox file changed")
            #expect(Self.liveRecords(f.outboxPath) == beforeLive, "\(where_): the live records changed")
            if f.bridge.drainRaw().contains(where: { $0.contains(#""type":"7""#) }) {
                Issue.record("\(where_): a bad input produced a \"7\"")
            }
        }
        // The bridge still works after the bad call (unless the probe closed it).
        if kind != .afterClose, kind != .doubleClose, function != "iap_close" {
            #expect(throws: Never.self, "\(where_): the bridge is unusable afterwards") { _ = try f.bridge.simulator(#"{"op":"clock"}"#) }
        }
    }

    @Test("the table covers every iap_ function the header declares, and nothing else")
    func headerAndTableAgree() throws {
        let header = try String(contentsOfFile: repoRoot + "/include/iap_bridge.h", encoding: .utf8)
        let declared = Set(Self.declaredFunctions(header))
        let tabled = Set(Self.table.map(\.name))
        #expect(declared.count >= 14, "parsed \(declared.sorted())")
        #expect(declared.subtracting(tabled).isEmpty, "entry points missing from the bad-input matrix: \(declared.subtracting(tabled).sorted())")
        #expect(tabled.subtracting(declared).isEmpty, "matrix rows for functions the header does not declare: \(tabled.subtracting(declared).sorted())")
    }

    /// Names of the functions declared in a C header: `iap_name(` outside comments.
    static func declaredFunctions(_ header: String) -> [String] {
        var text = header
        // Drop /* ... */ comments and #define lines.
        while let start = text.range(of: "/*"), let end = text.range(of: "*/", range: start.upperBound..<text.endIndex) {
            text.removeSubrange(start.lowerBound..<end.upperBound)
        }
        let lines = text.split(separator: "\n").filter { !$0.trimmingCharacters(in: .whitespaces).hasPrefix("#") }
        var names: [String] = []
        for line in lines {
            let chars = Array(line)
            var i = 0
            while i < chars.count {
                guard String(chars[i...]).hasPrefix("iap_") else { i += 1; continue }
                if i > 0, chars[i - 1].isLetter || chars[i - 1].isNumber || chars[i - 1] == "_" { i += 1; continue }
                var j = i
                while j < chars.count, chars[j].isLetter || chars[j].isNumber || chars[j] == "_" { j += 1 }
                var k = j
                while k < chars.count, chars[k] == " " { k += 1 }
                if k < chars.count, chars[k] == "(" { names.append(String(chars[i..<j])) }
                i = j
            }
        }
        return names
    }

    @Test("the functions without arguments answer sanely; iap_errmsg is per thread")
    func noArgumentFunctions() throws {
        _ = iap_confirm(nil, 0)
        #expect(lastError().hasPrefix("iap_confirm: "))
        // Another thread has its own last message: "" before its first failure.
        let seen = Locked<String?>(nil)
        let done = DispatchSemaphore(value: 0)
        let t = Thread {
            let first = String(cString: iap_errmsg())
            _ = iap_flush(nil)
            seen.withLock { $0 = first + "|" + String(cString: iap_errmsg()) }
            done.signal()
        }
        t.start()
        done.wait()
        #expect(seen.withLock { $0 } == "|iap_flush: the bridge is NULL")
        #expect(lastError().hasPrefix("iap_confirm: "), "this thread's message is untouched")
        for code in IAPCode.allCases {
            #expect(String(cString: iap_error_name(code.rawValue)) == code.name)
        }
    }

    /// `#define NAME value` lines of the header, value as written.
    static func headerDefines(_ header: String) -> [(String, String)] {
        header.split(separator: "\n").compactMap { line in
            let parts = line.split(separator: " ", omittingEmptySubsequences: true)
            guard parts.count >= 3, parts[0] == "#define" else { return nil }
            return (String(parts[1]), parts[2...].joined(separator: " "))
        }
    }

    @Test("iap_launch without StoreKit (Linux): IAP_E_NOT_SUPPORTED with a sentence, again and again, from any thread; a bridge opened after it works")
    func launchWithoutStoreKit() async throws {
        for _ in 0..<3 {
            #expect(iap_launch() == IAPCode.notSupported.rawValue)
            #expect(String(cString: iap_errmsg()).hasPrefix("iap_launch: StoreKit is not available on this platform"))
        }
        let codes = await withTaskGroup(of: Int32.self) { g in
            for _ in 0..<8 { g.addTask { iap_launch() } }
            return await g.reduce(into: [Int32]()) { $0.append($1) }
        }
        #expect(codes == Array(repeating: IAPCode.notSupported.rawValue, count: 8))
        let f = try Fixture()
        #expect(throws: Never.self) { _ = try f.bridge.simulator(#"{"op":"clock"}"#) }
    }

    @Test("the header is the one source of the ABI's constants: codes, names, version (iap_error_name, iap_version, iap_version_number agree)")
    func headerIsTheOneSource() throws {
        let header = try String(contentsOfFile: repoRoot + "/include/iap_bridge.h", encoding: .utf8)
        let defines = Self.headerDefines(header)
        var codes: [String: Int32] = [:]
        for (name, value) in defines where name == "IAP_OK" || name.hasPrefix("IAP_E_") {
            let digits = String(value.filter { $0 == "-" || $0.isNumber })
            let n = Int32(digits)
            #expect(n != nil, "\(name) = \(value)")
            codes[name] = n
        }
        #expect(codes.count == IAPCode.allCases.count, "header codes \(codes.count), Swift codes \(IAPCode.allCases.count)")
        for code in IAPCode.allCases {
            #expect(codes[code.name] == code.rawValue, "\(code.name): header \(String(describing: codes[code.name])), Swift \(code.rawValue)")
            #expect(String(cString: iap_error_name(code.rawValue)) == code.name)
            // Every code has its sentence next to it in the header.
            let at = try #require(header.range(of: "#define \(code.name) "))
            let before = header[..<at.lowerBound].suffix(400)
            #expect(before.contains("*/"), "\(code.name) has no comment above it")
        }
        let d = Dictionary(defines, uniquingKeysWith: { a, _ in a })
        let major = try #require(Int32(d["IAP_VERSION_MAJOR"] ?? "")), minor = try #require(Int32(d["IAP_VERSION_MINOR"] ?? ""))
        let patch = try #require(Int32(d["IAP_VERSION_PATCH"] ?? ""))
        #expect(d["IAP_VERSION_STRING"] == "\"\(major).\(minor).\(patch)\"")
        #expect(String(cString: iap_version()) == "\(major).\(minor).\(patch)")
        #expect(d["IAP_VERSION_NUMBER"] == String(major * 10000 + minor * 100 + patch))
        #expect(iap_version_number() == major * 10000 + minor * 100 + patch)
        // The README's table and the C# binding's names list every code too.
        let readme = try String(contentsOfFile: repoRoot + "/README.md", encoding: .utf8)
        // The C# binding's copy of the codes, wherever the Unity package keeps it.
        let fm = FileManager.default
        var candidates = [repoRoot + "/samples/unity/IAPBridge/BridgeException.cs"]
        if let packages = try? fm.contentsOfDirectory(atPath: repoRoot + "/unity") {
            for p in packages { candidates.append(repoRoot + "/unity/\(p)/Runtime/BridgeException.cs") }
        }
        let csPath = try #require(candidates.first { fm.fileExists(atPath: $0) }, "BridgeException.cs not found in \(candidates)")
        let csharp = try String(contentsOfFile: csPath, encoding: .utf8)
        for code in IAPCode.allCases where code != .ok {
            #expect(readme.contains(code.name), "README's error table lacks \(code.name)")
            #expect(csharp.contains(code.name) && csharp.contains("\(code.rawValue)"), "BridgeException.cs lacks \(code.name) = \(code.rawValue)")
        }
    }
}
