<?php
// Stand-in for the installed framework: laraq only reads the version constant.
namespace Illuminate\Foundation;

class Application
{
    const VERSION = '8.83.27';
}
