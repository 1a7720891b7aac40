function mfuncvar::data() {
  {
    'mfuncvar::k' => $facts['os']['family'],
    'mfuncvar::x' => "${facts['os']['nosuch']['x']}",
    'mfuncvar::y' => $nosuch,
  }
}
