/*
 * The Godot 4 class (bindings/godot/godot4/iap_gdextension.c) has no engine
 * to run in here (Debian has no Godot 4), so its methods are called directly:
 * after close(), every call and a second close() answer IAP_E_CLOSED with
 * "the bridge was closed; open a new one", and open() opens again.
 * Run by Tests/bindings/godot3/run.sh:  godot4_methods CONFIG_JSON
 */
#include "iap_gdextension.c"

static int passed, failed;

static void check(int ok, const char *what, const instance *self) {
    if (ok) { passed++; return; }
    failed++;
    fprintf(stderr, "godot4 methods: FAIL: %s (last_error %d: %s)\n", what, self->last_error, self->errmsg);
}

/* Calls a method with one string argument (or none); returns its int result. */
static int64_t call(impl_fn fn, instance *self, const char *s, int64_t i1, int64_t i2, char **ret_str) {
    call_args a = {0};
    a.s[0] = (char *)s;
    a.i[1] = i1;
    a.i[2] = i2;
    fn(self, &a);
    if (ret_str) *ret_str = a.ret_str;
    else free(a.ret_str);
    return a.ret_int;
}

static int closed(const instance *self) {
    return self->last_error == IAP_E_CLOSED && strcmp(self->errmsg, "the bridge was closed; open a new one") == 0;
}

int main(int argc, char **argv) {
    instance self = {0};
    char *s = NULL;
    if (argc != 2) { fprintf(stderr, "usage: godot4_methods CONFIG_JSON\n"); return 2; }

    check(call(m_open, &self, argv[1], 0, 0, NULL) == IAP_OK, "open", &self);
    check(call(m_close, &self, NULL, 0, 0, NULL) == IAP_OK, "close", &self);
    check(call(m_close, &self, NULL, 0, 0, NULL) == IAP_E_CLOSED && closed(&self), "a second close: IAP_E_CLOSED", &self);
    call(m_poll, &self, NULL, 0, 0, &s);
    check(s == NULL && closed(&self), "poll after close: \"\", IAP_E_CLOSED", &self);
    call(m_buy, &self, "coins_100", 0, 1, &s);
    check(s == NULL && closed(&self), "buy after close: \"\", IAP_E_CLOSED", &self);
    check(call(m_confirm, &self, "1", 0, 0, NULL) == IAP_E_CLOSED && closed(&self), "confirm after close: IAP_E_CLOSED", &self);
    check(call(m_flush, &self, NULL, 0, 0, NULL) == IAP_E_CLOSED && closed(&self), "flush after close: IAP_E_CLOSED", &self);
    check(call(m_restore, &self, NULL, 0, 0, NULL) == IAP_E_CLOSED && closed(&self), "restore after close: IAP_E_CLOSED", &self);
    check(call(m_request_products, &self, "[\"coins_100\"]", 0, 0, NULL) == IAP_E_CLOSED && closed(&self),
          "request_products after close: IAP_E_CLOSED", &self);
    call(m_simulator, &self, "{\"op\":\"transactions\"}", 0, 0, &s);
    check(s == NULL && closed(&self), "simulator after close: \"\", IAP_E_CLOSED", &self);

    /* A new open on the same object works again. */
    check(call(m_open, &self, argv[1], 0, 0, NULL) == IAP_OK, "open again", &self);
    check(call(m_flush, &self, NULL, 0, 0, NULL) == IAP_OK, "flush on the reopened bridge", &self);
    check(call(m_close, &self, NULL, 0, 0, NULL) == IAP_OK, "close it", &self);

    /* An object never opened is no bridge (not a closed one). */
    instance fresh = {0};
    check(call(m_poll, &fresh, NULL, 0, 0, &s) == 0 && s == NULL && fresh.last_error == IAP_E_INVALID_HANDLE,
          "poll on an object never opened: IAP_E_INVALID_HANDLE", &fresh);
    check(call(m_close, &fresh, NULL, 0, 0, NULL) == IAP_E_INVALID_HANDLE, "close on an object never opened: IAP_E_INVALID_HANDLE", &fresh);

    printf("godot4 methods: %d passed, %d failed\n", passed, failed);
    return failed == 0 ? 0 : 1;
}
