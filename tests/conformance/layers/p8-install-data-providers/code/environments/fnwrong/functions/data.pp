function environment::data() { { 'k' => 'not found here' } }
