/*
 * iap_gdextension.c: IAPBridge for Godot 4 (GDExtension, 4.2+), in C.
 * COMPILED HERE, NEVER RUN IN AN ENGINE: CI builds it against the
 * gdextension_interface.h that bindings/godot/interfaces.sh generates from
 * Debian's Godot 4 source and calls its methods directly from C
 * (Tests/bindings/godot3/godot4_methods.c); no Godot 4 engine has loaded it
 * (Debian bookworm has none).
 *
 * Registers IAPBridgeNative (a RefCounted), one bridge per object:
 *   open(config_json: String) -> int        OK or a negative IAP_E_* code
 *   close() -> int                          then every call (and close()) answers
 *                                           IAP_E_CLOSED until the next open()
 *   buy(product_id: String, click_ms: int, quantity: int) -> String   the key, "" on error
 *   confirm(key: String) -> int             the message's "key" String, as received
 *   poll() -> String                        the next message's JSON, "" when none
 *   simulator(command_json: String) -> String   the answer, "" on error
 *   request_products(ids_json: String) -> int, restore() -> int, flush() -> int
 *   last_error() -> int, errmsg() -> String the last failed call of this object
 * Keys stay Strings: never to_int() or float() them.
 */
#include <stdlib.h>

#include <gdextension_interface.h>

#include "iap_gd_common.h"

#define EXPORT __attribute__((visibility("default")))

/* Opaque engine values: a String and a StringName are one pointer in every
 * build; a Variant is at most 40 bytes (double-precision builds). */
typedef struct { _Alignas(8) uint8_t data[8]; } gd_string;
typedef struct { _Alignas(8) uint8_t data[8]; } gd_string_name;
typedef struct { _Alignas(8) uint8_t data[40]; } gd_variant;

static struct {
    GDExtensionClassLibraryPtr library;
    GDExtensionInterfaceStringNewWithUtf8Chars string_new;
    GDExtensionInterfaceStringNameNewWithUtf8Chars string_name_new;
    GDExtensionInterfaceStringToUtf8Chars string_to_utf8;
    GDExtensionInterfaceVariantGetType variant_get_type;
    GDExtensionInterfaceClassdbConstructObject construct_object;
    GDExtensionInterfaceObjectSetInstance object_set_instance;
    GDExtensionInterfaceClassdbRegisterExtensionClass2 register_class;
    GDExtensionInterfaceClassdbRegisterExtensionClassMethod register_method;
    GDExtensionPtrDestructor string_destroy;
    GDExtensionPtrDestructor string_name_destroy;
    GDExtensionVariantFromTypeConstructorFunc variant_from_int;
    GDExtensionVariantFromTypeConstructorFunc variant_from_string;
    GDExtensionTypeFromVariantConstructorFunc int_from_variant;
    GDExtensionTypeFromVariantConstructorFunc string_from_variant;
} gd;

typedef struct {
    GDExtensionObjectPtr owner;
    int64_t handle;
    int closed;        /* close() was called: IAP_E_CLOSED until the next open() */
    int32_t last_error;
    char errmsg[512];
} instance;

enum { T_INT = GDEXTENSION_VARIANT_TYPE_INT, T_STRING = GDEXTENSION_VARIANT_TYPE_STRING };

/* A method's arguments and result, engine-neutral. */
typedef struct {
    char *s[3];
    int64_t i[3];
    int64_t ret_int;
    char *ret_str;   /* malloc'ed or NULL ("") */
} call_args;

typedef void (*impl_fn)(instance *self, call_args *a);

typedef struct {
    const char *name;
    impl_fn impl;
    int ret;           /* T_INT or T_STRING */
    int argc;
    int types[3];
    const char *arg_names[3];
} method;

/* ---- Strings ------------------------------------------------------------- */

static char *utf8_of(const gd_string *s) {
    GDExtensionInt n = gd.string_to_utf8(s, NULL, 0);
    char *out = malloc((size_t)n + 1);
    if (!out) return NULL;
    gd.string_to_utf8(s, out, n);
    out[n] = 0;
    return out;
}

static char *dup_str(const char *s) {
    size_t n = strlen(s ? s : "");
    char *out = malloc(n + 1);
    if (out) memcpy(out, s ? s : "", n + 1);
    return out;
}

/* ---- The methods ---------------------------------------------------------- */

/* This object's bridge, or NULL with *code set (IAP_E_CLOSED after close()). */
static iap_bridge *bridge_of(instance *self, int32_t *code) {
    if (self->closed) {
        *code = gdc_closed_error();
        return NULL;
    }
    return gdc_bridge(self->handle, code);
}

static int64_t done(instance *self, int64_t code) {
    self->last_error = code < 0 ? (int32_t)code : IAP_OK;
    if (code < 0) snprintf(self->errmsg, sizeof self->errmsg, "%s", gdc_errmsg());
    return code;
}

static void m_open(instance *self, call_args *a) {
    if (self->handle > 0) {
        gdc_set_error("this IAPBridgeNative is already open: close() it first");
        a->ret_int = done(self, IAP_E_BUSY);
        return;
    }
    int64_t h = gdc_open(a->s[0]);
    if (h > 0) {
        self->handle = h;
        self->closed = 0;
    }
    a->ret_int = done(self, h > 0 ? IAP_OK : h);
}

static void m_close(instance *self, call_args *a) {
    int32_t code;
    if (!bridge_of(self, &code)) {
        a->ret_int = done(self, code);
        return;
    }
    a->ret_int = done(self, gdc_close(self->handle));
    self->handle = 0;
    self->closed = 1;
}

static void m_buy(instance *self, call_args *a) {
    int32_t code;
    int64_t key = 0;
    iap_bridge *b = bridge_of(self, &code);
    if (b && (a->i[2] < 1 || a->i[2] > 10)) {
        gdc_set_error("buy: quantity must be from 1 to 10");
        code = IAP_E_INVALID_ARG;
    } else if (b) {
        code = gdc_fail(a->i[2] == 1 ? iap_buy(b, a->s[0], a->i[1], &key)
                                     : iap_buy_quantity(b, a->s[0], (int32_t)a->i[2], a->i[1], &key));
    }
    if (done(self, code) == IAP_OK) {
        char buf[32];
        gdc_key_string(key, buf, sizeof buf);
        a->ret_str = dup_str(buf);
    }
}

static void m_confirm(instance *self, call_args *a) {
    int32_t code;
    a->ret_int = done(self, bridge_of(self, &code) ? gdc_confirm(self->handle, a->s[0]) : code);
}

static void m_poll(instance *self, call_args *a) {
    int32_t code;
    iap_bridge *b = bridge_of(self, &code);
    if (done(self, code) != IAP_OK) return;
    char *m = iap_poll(b);
    a->ret_str = dup_str(m);
    iap_free(m);
}

static void m_simulator(instance *self, call_args *a) {
    int32_t code;
    char *answer = NULL;
    iap_bridge *b = bridge_of(self, &code);
    if (b) code = gdc_fail(iap_simulator(b, a->s[0], &answer));
    if (done(self, code) == IAP_OK) a->ret_str = dup_str(answer);
    iap_free(answer);
}

static void m_request_products(instance *self, call_args *a) {
    int32_t code;
    iap_bridge *b = bridge_of(self, &code);
    a->ret_int = done(self, b ? gdc_fail(iap_request_products(b, a->s[0])) : code);
}

static void m_restore(instance *self, call_args *a) {
    int32_t code;
    iap_bridge *b = bridge_of(self, &code);
    a->ret_int = done(self, b ? gdc_fail(iap_restore(b)) : code);
}

static void m_flush(instance *self, call_args *a) {
    int32_t code;
    iap_bridge *b = bridge_of(self, &code);
    a->ret_int = done(self, b ? gdc_fail(iap_flush(b)) : code);
}

static void m_last_error(instance *self, call_args *a) { a->ret_int = self->last_error; }
static void m_errmsg(instance *self, call_args *a) { a->ret_str = dup_str(self->errmsg); }

static const method methods[] = {
    {"open", m_open, T_INT, 1, {T_STRING}, {"config_json"}},
    {"close", m_close, T_INT, 0, {0}, {0}},
    {"buy", m_buy, T_STRING, 3, {T_STRING, T_INT, T_INT}, {"product_id", "click_ms", "quantity"}},
    {"confirm", m_confirm, T_INT, 1, {T_STRING}, {"key"}},
    {"poll", m_poll, T_STRING, 0, {0}, {0}},
    {"simulator", m_simulator, T_STRING, 1, {T_STRING}, {"command_json"}},
    {"request_products", m_request_products, T_INT, 1, {T_STRING}, {"ids_json"}},
    {"restore", m_restore, T_INT, 0, {0}, {0}},
    {"flush", m_flush, T_INT, 0, {0}, {0}},
    {"last_error", m_last_error, T_INT, 0, {0}, {0}},
    {"errmsg", m_errmsg, T_STRING, 0, {0}, {0}},
};

/* ---- Calls from the engine -------------------------------------------------- */

static void free_args(call_args *a) {
    for (int k = 0; k < 3; k++) free(a->s[k]);
    free(a->ret_str);
}

static void put_string(GDExtensionTypePtr dest_initialized, const char *s) {
    gd.string_destroy(dest_initialized);
    gd.string_new(dest_initialized, s ? s : "");
}

/* Variant call (GDScript without static types, call(), callv()). */
static void call_variant(void *userdata, GDExtensionClassInstancePtr p_instance, const GDExtensionConstVariantPtr *args,
                         GDExtensionInt argc, GDExtensionVariantPtr r_return, GDExtensionCallError *r_error) {
    const method *m = userdata;
    call_args a = {0};
    r_error->error = GDEXTENSION_CALL_OK;
    if (argc != m->argc) {
        r_error->error = argc < m->argc ? GDEXTENSION_CALL_ERROR_TOO_FEW_ARGUMENTS : GDEXTENSION_CALL_ERROR_TOO_MANY_ARGUMENTS;
        r_error->expected = m->argc;
        return;
    }
    for (int k = 0; k < m->argc; k++) {
        if ((int)gd.variant_get_type(args[k]) != m->types[k]) {
            r_error->error = GDEXTENSION_CALL_ERROR_INVALID_ARGUMENT;
            r_error->argument = k;
            r_error->expected = m->types[k];
            free_args(&a);
            return;
        }
        if (m->types[k] == T_INT) {
            gd.int_from_variant(&a.i[k], (GDExtensionVariantPtr)args[k]);
        } else {
            gd_string s;
            gd.string_from_variant(&s, (GDExtensionVariantPtr)args[k]);
            a.s[k] = utf8_of(&s);
            gd.string_destroy(&s);
        }
    }
    m->impl(p_instance, &a);
    if (m->ret == T_INT) {
        gd.variant_from_int(r_return, &a.ret_int);
    } else {
        gd_string s;
        gd.string_new(&s, a.ret_str ? a.ret_str : "");
        gd.variant_from_string(r_return, &s);
        gd.string_destroy(&s);
    }
    free_args(&a);
}

/* Pointer call (statically typed GDScript): arguments are an int64_t* or a String*. */
static void call_ptr(void *userdata, GDExtensionClassInstancePtr p_instance, const GDExtensionConstTypePtr *args,
                     GDExtensionTypePtr r_ret) {
    const method *m = userdata;
    call_args a = {0};
    for (int k = 0; k < m->argc; k++) {
        if (m->types[k] == T_INT) a.i[k] = *(const int64_t *)args[k];
        else a.s[k] = utf8_of(args[k]);
    }
    m->impl(p_instance, &a);
    if (m->ret == T_INT) *(int64_t *)r_ret = a.ret_int;
    else put_string(r_ret, a.ret_str);
    free_args(&a);
}

/* ---- The class ------------------------------------------------------------- */

static GDExtensionObjectPtr create_instance(void *class_userdata) {
    (void)class_userdata;
    gd_string_name parent, name;
    gd.string_name_new(&parent, "RefCounted");
    gd.string_name_new(&name, "IAPBridgeNative");
    GDExtensionObjectPtr obj = gd.construct_object(&parent);
    instance *self = calloc(1, sizeof *self);
    if (self) {
        self->owner = obj;
        gd.object_set_instance(obj, &name, self);
    }
    gd.string_name_destroy(&parent);
    gd.string_name_destroy(&name);
    return obj;
}

/* The object is freed: its bridge is closed (results not confirmed stay on disk). */
static void free_instance(void *class_userdata, GDExtensionClassInstancePtr p_instance) {
    instance *self = p_instance;
    (void)class_userdata;
    if (self && self->handle > 0) gdc_close(self->handle);
    free(self);
}

static void register_methods(const gd_string_name *class_name) {
    for (size_t n = 0; n < sizeof methods / sizeof methods[0]; n++) {
        const method *m = &methods[n];
        gd_string_name name, empty, arg_names[3];
        gd_string hint;
        GDExtensionPropertyInfo ret, args[3];
        GDExtensionClassMethodArgumentMetadata meta[3];
        gd.string_name_new(&name, m->name);
        gd.string_name_new(&empty, "");
        gd.string_new(&hint, "");
        ret = (GDExtensionPropertyInfo){(GDExtensionVariantType)m->ret, &empty, &empty, 0, &hint, 6};
        for (int k = 0; k < m->argc; k++) {
            gd.string_name_new(&arg_names[k], m->arg_names[k]);
            args[k] = (GDExtensionPropertyInfo){(GDExtensionVariantType)m->types[k], &arg_names[k], &empty, 0, &hint, 6};
            meta[k] = m->types[k] == T_INT ? GDEXTENSION_METHOD_ARGUMENT_METADATA_INT_IS_INT64
                                           : GDEXTENSION_METHOD_ARGUMENT_METADATA_NONE;
        }
        GDExtensionClassMethodInfo info = {
            .name = &name,
            .method_userdata = (void *)m,
            .call_func = call_variant,
            .ptrcall_func = call_ptr,
            .method_flags = GDEXTENSION_METHOD_FLAGS_DEFAULT,
            .has_return_value = 1,
            .return_value_info = &ret,
            .return_value_metadata = m->ret == T_INT ? GDEXTENSION_METHOD_ARGUMENT_METADATA_INT_IS_INT64
                                                     : GDEXTENSION_METHOD_ARGUMENT_METADATA_NONE,
            .argument_count = (uint32_t)m->argc,
            .arguments_info = args,
            .arguments_metadata = meta,
        };
        gd.register_method(gd.library, class_name, &info);
        for (int k = 0; k < m->argc; k++) gd.string_name_destroy(&arg_names[k]);
        gd.string_name_destroy(&name);
        gd.string_name_destroy(&empty);
        gd.string_destroy(&hint);
    }
}

static void initialize(void *userdata, GDExtensionInitializationLevel level) {
    (void)userdata;
    if (level != GDEXTENSION_INITIALIZATION_SCENE) return;
    gd_string_name name, parent;
    gd.string_name_new(&name, "IAPBridgeNative");
    gd.string_name_new(&parent, "RefCounted");
    GDExtensionClassCreationInfo2 info = {
        .is_exposed = 1,
        .create_instance_func = create_instance,
        .free_instance_func = free_instance,
    };
    gd.register_class(gd.library, &name, &parent, &info);
    register_methods(&name);
    gd.string_name_destroy(&name);
    gd.string_name_destroy(&parent);
}

static void deinitialize(void *userdata, GDExtensionInitializationLevel level) {
    (void)userdata;
    if (level == GDEXTENSION_INITIALIZATION_SCENE) gdc_close_all();
}

/* get() returns a void (*)(): cast through void (*)(void), the type GCC lets
 * stand for any function, to the interface's own type. */
#define AS(type, fname) ((type)(void (*)(void))get(fname))
#define LOAD(field, type, fname) (gd.field = AS(type, fname)) != NULL

/* The entry symbol named in iap_bridge.gdextension. */
EXPORT GDExtensionBool iap_gdextension_init(GDExtensionInterfaceGetProcAddress get, GDExtensionClassLibraryPtr library,
                                            GDExtensionInitialization *init) {
    GDExtensionInterfaceVariantGetPtrDestructor destructor;
    GDExtensionInterfaceGetVariantFromTypeConstructor from_type;
    GDExtensionInterfaceGetVariantToTypeConstructor to_type;
    gd.library = library;
    if (!(LOAD(string_new, GDExtensionInterfaceStringNewWithUtf8Chars, "string_new_with_utf8_chars") &&
          LOAD(string_name_new, GDExtensionInterfaceStringNameNewWithUtf8Chars, "string_name_new_with_utf8_chars") &&
          LOAD(string_to_utf8, GDExtensionInterfaceStringToUtf8Chars, "string_to_utf8_chars") &&
          LOAD(variant_get_type, GDExtensionInterfaceVariantGetType, "variant_get_type") &&
          LOAD(construct_object, GDExtensionInterfaceClassdbConstructObject, "classdb_construct_object") &&
          LOAD(object_set_instance, GDExtensionInterfaceObjectSetInstance, "object_set_instance") &&
          LOAD(register_class, GDExtensionInterfaceClassdbRegisterExtensionClass2, "classdb_register_extension_class2") &&
          LOAD(register_method, GDExtensionInterfaceClassdbRegisterExtensionClassMethod, "classdb_register_extension_class_method")))
        return 0;
    destructor = AS(GDExtensionInterfaceVariantGetPtrDestructor, "variant_get_ptr_destructor");
    from_type = AS(GDExtensionInterfaceGetVariantFromTypeConstructor, "get_variant_from_type_constructor");
    to_type = AS(GDExtensionInterfaceGetVariantToTypeConstructor, "get_variant_to_type_constructor");
    if (!destructor || !from_type || !to_type) return 0;
    gd.string_destroy = destructor(GDEXTENSION_VARIANT_TYPE_STRING);
    gd.string_name_destroy = destructor(GDEXTENSION_VARIANT_TYPE_STRING_NAME);
    gd.variant_from_int = from_type(GDEXTENSION_VARIANT_TYPE_INT);
    gd.variant_from_string = from_type(GDEXTENSION_VARIANT_TYPE_STRING);
    gd.int_from_variant = to_type(GDEXTENSION_VARIANT_TYPE_INT);
    gd.string_from_variant = to_type(GDEXTENSION_VARIANT_TYPE_STRING);
    init->minimum_initialization_level = GDEXTENSION_INITIALIZATION_SCENE;
    init->userdata = NULL;
    init->initialize = initialize;
    init->deinitialize = deinitialize;
    return 1;
}
