function mfunc4::data() { { 'mfunc4::k' => 'from-function' } }
