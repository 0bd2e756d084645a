use super::*;

fn answer(line: &str) -> Value {
    match classify(line.as_bytes(), true) {
        Verdict::Answer(bytes) => serde_json::from_slice(&bytes).unwrap(),
        other => panic!("{line}: expected an answer, got {other:?}"),
    }
}

fn dropped(line: &str) -> bool {
    matches!(classify(line.as_bytes(), true), Verdict::Drop(_))
}

#[test]
fn requests_and_notifications_go_on_to_rmcp() {
    for line in [
        r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#,
        r#"{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"exec","arguments":{}}}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        "\u{feff}{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\"}\r",
    ] {
        assert!(
            matches!(classify(line.as_bytes(), true), Verdict::Forward(_)),
            "{line}"
        );
    }
}

#[test]
fn garbage_and_truncated_json_are_parse_errors_with_a_null_id() {
    for line in [
        "this is not json",
        r#"{"jsonrpc":"2.0","id":3,"meth"#,
        "{,}",
    ] {
        let a = answer(line);
        assert_eq!(a["error"]["code"], PARSE_ERROR, "{a}");
        assert_eq!(a["id"], Value::Null, "{a}");
        assert!(a.as_object().unwrap().contains_key("id"), "{a}");
    }
}

#[test]
fn a_whole_request_with_one_bad_string_is_answered_with_its_id() {
    for line in [
        r#"{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"name":"exec","arguments":{"argv":["echo","\ud800"]}}}"#,
        "{\"jsonrpc\":\"2.0\",\"id\":\"r-1\",\"method\":\"ping\",\"params\":{\"x\":\"\u{0}\"}}",
    ] {
        let a = answer(line);
        assert_eq!(a["error"]["code"], PARSE_ERROR, "{a}");
        assert_ne!(a["id"], Value::Null, "{line}: {a}");
    }
}

#[test]
fn from_2026_07_28_an_unreadable_id_is_left_out() {
    assert!(null_id_for(None));
    assert!(null_id_for(Some(&ProtocolVersion::V_2025_11_25)));
    assert!(!null_id_for(Some(&ProtocolVersion::V_2026_07_28)));
    let Verdict::Answer(bytes) = classify(b"nope", false) else {
        panic!()
    };
    let a: Value = serde_json::from_slice(&bytes).unwrap();
    assert!(!a.as_object().unwrap().contains_key("id"), "{a}");
}

#[test]
fn json_that_is_not_a_request_is_an_invalid_request() {
    for line in ["42", r#""ping""#, "null", r#"{"hello":"world"}"#] {
        let a = answer(line);
        assert_eq!(a["error"]["code"], INVALID_REQUEST, "{line}: {a}");
        assert_eq!(a["id"], Value::Null, "{a}");
    }
    let a = answer(r#"{"jsonrpc":"1.0","id":9,"method":"ping"}"#);
    assert_eq!(
        (a["id"].clone(), a["error"]["code"].clone()),
        (json!(9), json!(INVALID_REQUEST))
    );
    let a = answer(r#"{"jsonrpc":"2.0","id":{"x":1},"method":"ping"}"#);
    assert_eq!(a["id"], Value::Null, "{a}");
    assert!(
        a["error"]["message"]
            .as_str()
            .unwrap()
            .contains("\"id\" is object"),
        "{a}"
    );
    let a = answer(r#"{"jsonrpc":"2.0","method":1,"params":"bar"}"#);
    assert_eq!(a["id"], Value::Null, "{a}");
}

#[test]
fn bad_params_keep_the_request_id() {
    let a = answer(r#"{"jsonrpc":"2.0","id":"q7","method":"tools/call","params":5}"#);
    assert_eq!(a["id"], "q7");
    assert_eq!(a["error"]["code"], INVALID_PARAMS);
    assert!(
        a["error"]["message"]
            .as_str()
            .unwrap()
            .contains("tools/call"),
        "{a}"
    );
}

#[test]
fn notifications_and_responses_are_never_answered() {
    assert!(dropped(""));
    assert!(dropped("   \r"));
    assert!(dropped(
        r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":7}"#
    ));
    assert!(dropped(r#"{"jsonrpc":"2.0","id":{"x":4},"result":{}}"#));
    assert!(dropped(
        r#"[{"jsonrpc":"2.0","method":"notifications/initialized"},{"jsonrpc":"2.0","method":"x"}]"#
    ));
}

#[test]
fn a_batch_gets_one_answer_per_request_in_an_array() {
    let a = answer("[]");
    assert_eq!(a["error"]["code"], INVALID_REQUEST);
    let a = answer(
        r#"[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/initialized"},1,{"jsonrpc":"2.0","id":"b","method":"tools/list"}]"#,
    );
    let ids: Vec<Value> = a
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["id"].clone())
        .collect();
    assert_eq!(ids, [json!(1), Value::Null, json!("b")]);
    assert!(
        a[0]["error"]["message"].as_str().unwrap().contains("batch"),
        "{a}"
    );
}

#[test]
fn the_id_is_read_from_the_start_of_a_message() {
    let cases: &[(&str, Option<Value>)] = &[
        (
            r#"{"jsonrpc":"2.0","id":17,"method":"tools/call","params":{"argu"#,
            Some(json!(17)),
        ),
        (
            r#"{ "method" : "x", "id" : "a\"b" , "params""#,
            Some(json!("a\"b")),
        ),
        (r#"{"params":{"id":5,"s":"}\"{"},"id":6,"x"#, Some(json!(6))),
        (
            r#"{"jsonrpc":"2.0","method":"tools/call","params":{"arguments":{"data":"xxxx"#,
            None,
        ),
        (r#"{"id":12"#, None),
        (r#"{"id":null,"method":"x"}"#, None),
        (r#"{"id":[1],"method":"x"}"#, None),
        (r#"["id",1]"#, None),
        ("garbage", None),
        ("", None),
    ];
    for (head, want) in cases {
        assert_eq!(&leading_id(head.as_bytes()), want, "{head}");
    }
}
