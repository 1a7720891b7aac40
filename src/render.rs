pub fn _stub() {}
